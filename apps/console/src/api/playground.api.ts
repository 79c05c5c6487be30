import { ApiError, apiPath, csrfHeader } from './client.ts'
import type { PlaygroundRun } from './types.ts'
import type { PlaygroundRunBody } from '@tracewell/api-schemas'

export type PlaygroundRequest = PlaygroundRunBody

/**
 * One playground run, streamed: the server sends {type:"text"} events as the model answers, then
 * {type:"done"} with the run. `onText` sees each piece as it comes.
 */
export async function runPlayground(projectId: string, request: PlaygroundRequest, onText: (text: string) => void): Promise<PlaygroundRun> {
  const response = await fetch(apiPath('/api/playground/runs', { project_id: projectId }), {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', [csrfHeader]: '1' },
    body: JSON.stringify({ ...request, stream: true }),
  })
  if (!response.ok || response.body === null) {
    const answer = (await response.json().catch(() => ({}))) as { message?: string }
    throw new ApiError(response.status, answer.message ?? `${response.status} ${response.statusText}`)
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      if (!line.startsWith('data: ')) continue
      const event = JSON.parse(line.slice(6)) as { type: 'text'; text: string } | ({ type: 'done' } & PlaygroundRun)
      if (event.type === 'text') onText(event.text)
      else return event
    }
  }
  throw new ApiError(502, 'the run ended without its result')
}
