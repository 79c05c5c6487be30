import type { ControlPlaneConfig } from '@tracewell/config'

/** SIGNUP (docs/settings.md): who may make an account without being made one. */
export type SignupMode = ControlPlaneConfig['SIGNUP']
