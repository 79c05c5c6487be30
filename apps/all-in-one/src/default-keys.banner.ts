import { setupPath, type DefaultWorkspace } from '@tracewell/control-plane'

/** The URL a user on this machine reaches the process at: a wildcard bind is shown as localhost. */
export function shownBaseUrl(host: string, port: number): string {
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host
  return `http://${shownHost}:${port}`
}

/**
 * What a new user needs to send a first trace: printed when the default keys are created, and
 * again by `npm run keys`. `heading` says which of the two it is.
 */
export function defaultKeysBanner(workspace: DefaultWorkspace, baseUrl: string, heading: string): string {
  return `
${heading}

  Base URL (api_host):   ${baseUrl}
  Project API key:       ${workspace.projectApiKey}
  Team API key:          ${workspace.teamApiKey}
  Project:               ${workspace.projectName} (${workspace.projectId})

Send a trace:
  curl -X POST ${baseUrl}/api/trace -H 'x-api-key: ${workspace.projectApiKey}' -H 'content-type: application/json' \\
    -d '{"resourceSpans":[{"resource":{"attributes":{"service.name":{"stringValue":"demo"}}},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"hello","kind":1,"startTimeUnixNano":"1732137930000000000","endTimeUnixNano":"1732137931000000000"}]}]}]}'
See it:
  curl ${baseUrl}/api/traces -H 'x-api-key: ${workspace.projectApiKey}'

SDKs: Python  langtrace.init(api_key="<project key>", api_host="${baseUrl}/api/trace")
      TypeScript  Langtrace.init({ api_key: '<project key>', api_host: '${baseUrl}/api/trace' })
`
}

/**
 * The setup link while no team has an owner (docs/accounts.md#the-first-owner): printed beside
 * the keys, and again by `npm run keys` while unused.
 */
export function setupLinkBanner(token: string, baseUrl: string): string {
  return `
Make the owner account of this Tracewell (the link works once; \`npm run keys\` shows it again until then):

  ${baseUrl}${setupPath(token)}
`
}
