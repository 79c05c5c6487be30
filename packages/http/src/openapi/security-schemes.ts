/** How a Tracewell caller proves who it is; each service's document lists the ones its routes take. */
export const securitySchemes = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'a project or team key; `Authorization: Bearer <key>` is accepted too' },
  cronKey: { type: 'apiKey', in: 'header', name: 'cron-api-key' },
  adminKey: { type: 'apiKey', in: 'header', name: 'x-admin-key' },
  consoleSession: { type: 'apiKey', in: 'cookie', name: 'tw_session', description: 'the web console’s signed session cookie (team-key sign-in)' },
  userSession: { type: 'apiKey', in: 'cookie', name: 'tw_sid', description: 'a signed-in person’s session cookie (POST /api/auth/sign-in); requests that change data also send x-tracewell-csrf: 1' },
} as const

export type SecuritySchemeName = keyof typeof securitySchemes

export interface OpenApiOptions {
  title: string
  description: string
  /** The credentials the service's routes take (OpenAPI lints a scheme no route uses). */
  securitySchemes: readonly SecuritySchemeName[]
}
