import { permissions, type KeyScope, type Permission } from './permissions.ts'
import { atLeast, type ProjectRole } from './roles.ts'

/** Whether a person with `role` (on the project, or the team for team permissions) may. */
export function roleAllows(role: ProjectRole, permission: Permission): boolean {
  return atLeast(role, permissions[permission].lowest)
}

/**
 * Whether a project key with `scopes` may, on its own project. Keys made before scopes existed
 * (`scopes` null) keep what they could always do: every scope.
 */
export function keyAllows(scopes: readonly KeyScope[] | null, permission: Permission): boolean {
  const needed: KeyScope | undefined = (permissions[permission] as { keyScope?: KeyScope }).keyScope
  if (needed === undefined) return false
  if (scopes === null) return !notForKeysMadeBeforeScopes.has(permission)
  return scopes.includes(needed)
}

/**
 * What a `write` key may that a project key could not before scopes existed: keys made then keep
 * exactly the rights they had (issue 44 §4), so these stay refused to them.
 */
const notForKeysMadeBeforeScopes: ReadonlySet<Permission> = new Set(['dashboards:write'])

/** What a team key may: it acts as an admin of its team. */
export function teamKeyAllows(permission: Permission): boolean {
  return !(permissions[permission] as { people?: true }).people && roleAllows('admin', permission)
}
