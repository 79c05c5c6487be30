import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

// Real receivers on 127.0.0.1 for the notification tests (senders, worker, test endpoint): an HTTP server whose answer
// each test chooses, and an SMTP server (the smtp-server package) that keeps what it was sent.

export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export interface HttpReceiver {
  url: string
  requests: ReceivedRequest[]
  /** How the next requests are answered (default 200 "ok"). */
  answer: (request: ReceivedRequest, response: ServerResponse) => void
  close(): Promise<void>
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const receiver: HttpReceiver = {
    url: '',
    requests: [],
    answer: (_, response) => response.end('ok'),
    close: async () => {},
  }
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const received = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
      receiver.requests.push(received)
      receiver.answer(received, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  receiver.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return receiver
}

export interface ReceivedMail {
  from: string
  to: string[]
  data: string
}

export interface SmtpReceiver {
  url: string
  mails: ReceivedMail[]
  close(): Promise<void>
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address
        mails.push({ from, to: session.envelope.rcptTo.map((to) => to.address), data: Buffer.concat(chunks).toString('utf8') })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
