import type { TeamRole } from './roles.ts'

// The permission matrix: every route of the control plane names one of these (its
// `config.permission`), and nothing else decides who may call it. docs/permissions.md is
// generated from this table (`npm run docs:permissions`); the route-walk test asserts it.
//
// - `on`: what the permission is judged against. `project` permissions use the person's role on
//   the project the request is about (their project role, else their team role); `team`
//   permissions use their team role.
// - `lowest`: the lowest role allowed.
// - `keyScope`: the project-key scope that grants it (`ingest`, `read`, `write`); absent, no
//   project key may (team-level permissions, and those that spend the project's LLM connections:
//   project keys ship inside applications, so holding one must not run models on the bill).
//   Team keys act as an admin of their team.

export const keyScopes = ['ingest', 'read', 'write'] as const
export type KeyScope = (typeof keyScopes)[number]

export interface PermissionRule {
  on: 'team' | 'project'
  lowest: TeamRole
  keyScope?: KeyScope
  /** For people only, never a key: what it makes has an author, a holder or an owner. */
  people?: true
  /** One line for the generated table. */
  about: string
}

export const permissions = {
  // Reading a project: viewers and up, `read` keys.
  'traces:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Traces, spans, sessions, usage, summaries' },
  'scores:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Scores, feedback and score configurations' },
  'prompts:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Prompt registries, versions, labels and their history' },
  'datasets:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Datasets and their items' },
  'experiments:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Experiments and their results' },
  'evaluators:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Evaluators, their runs and judgments' },
  'dashboards:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Dashboards and their data' },
  'monitors:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Monitors, their states and history' },
  'llm-connections:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'LLM connections (never their keys)' },
  'settings:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Retention, masking rules, ingest limit, model prices' },
  'comments:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Comments on traces, spans, sessions, prompts, dataset items' },
  'annotation-queues:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: 'Annotation queues and their progress' },
  'project:read': { on: 'project', lowest: 'viewer', keyScope: 'read', about: "One project's name and description" },

  // Sending: `ingest` keys (the SDKs), members and up.
  'traces:ingest': { on: 'project', lowest: 'member', keyScope: 'ingest', about: 'Send traces' },
  'feedback:write': { on: 'project', lowest: 'member', keyScope: 'ingest', about: "Send a user's feedback on a span (Langtrace SDKs)" },

  // Working in a project: members and up, `write` keys unless it spends.
  'scores:write': { on: 'project', lowest: 'member', keyScope: 'write', about: 'Score and annotate traces, spans and sessions; configure scores' },
  'prompts:write': { on: 'project', lowest: 'member', keyScope: 'write', about: 'Create registries, add versions, move labels other than production' },
  'datasets:write': { on: 'project', lowest: 'member', keyScope: 'write', about: 'Create, fill and delete datasets' },
  'experiments:write': { on: 'project', lowest: 'member', keyScope: 'write', about: "Open SDK experiments, link their results, delete them" },
  'experiments:run': { on: 'project', lowest: 'member', about: 'Run a prompt over a dataset (calls a model)' },
  'evaluators:write': { on: 'project', lowest: 'member', about: 'Create, pause, run and delete evaluators (calls a model)' },
  'playground:run': { on: 'project', lowest: 'member', about: 'Run the playground (calls a model)' },
  'dashboards:write': { on: 'project', lowest: 'member', keyScope: 'write', about: 'Create, change, import and delete dashboards' },
  'monitors:write': { on: 'project', lowest: 'member', about: 'Create, change, mute and delete monitors' },
  // People only: a comment has an author, a queue item a person who holds it.
  'comments:write': { on: 'project', lowest: 'member', people: true, about: 'Comment, mention, resolve threads' },
  'annotation-queues:write': { on: 'project', lowest: 'member', people: true, about: 'Create queues, add items, take and complete items' },
  'views:write': { on: 'project', lowest: 'viewer', people: true, about: 'Read, save and delete one’s trace-list views, choose a default view' },
  'views:share': { on: 'project', lowest: 'member', people: true, about: 'Share a saved view with the project' },
  'traces:share': { on: 'project', lowest: 'member', about: 'Share a trace by a public read-only link' },

  // Running a project: admins and up.
  'prompts:label-production': { on: 'project', lowest: 'admin', keyScope: 'write', about: 'Move the production label (what the SDKs are served)' },
  'traces:delete': { on: 'project', lowest: 'admin', about: 'Delete a trace' },
  'traces:export': { on: 'project', lowest: 'admin', keyScope: 'read', about: "Export a project's spans" },
  'erasures:manage': { on: 'project', lowest: 'admin', about: 'Erase what is stored about a user, session or traces' },
  'llm-connections:write': { on: 'project', lowest: 'admin', about: 'Add, test and delete LLM connections' },
  'notification-channels:read': { on: 'project', lowest: 'member', about: 'Notification channels (with their targets) and delivery logs' },
  'notification-channels:write': { on: 'project', lowest: 'admin', about: 'Add, change, test and delete notification channels' },
  'settings:write': { on: 'project', lowest: 'admin', about: 'Set retention, masking rules, ingest limit, model prices' },
  'keys:manage': { on: 'project', lowest: 'admin', about: "List, create and revoke a project's keys" },
  'project:delete': { on: 'project', lowest: 'owner', about: 'Delete a project' },

  // The team.
  'projects:read': { on: 'team', lowest: 'viewer', about: "List the team's projects (those the person may see)" },
  'team:leave': { on: 'team', lowest: 'viewer', people: true, about: 'Leave the team (the last owner may not)' },
  'members:read': { on: 'team', lowest: 'viewer', about: 'List members and their roles' },
  'projects:create': { on: 'team', lowest: 'admin', about: 'Create projects' },
  'members:manage': { on: 'team', lowest: 'admin', about: 'Invite, re-role and remove members (up to their own role)' },
  'team-keys:manage': { on: 'team', lowest: 'admin', about: 'List, create and revoke team keys' },
  'audit-log:read': { on: 'team', lowest: 'admin', about: 'Read the audit log' },
  'sso:read': { on: 'team', lowest: 'admin', about: 'Read the single sign-on settings' },
  'sso:write': { on: 'team', lowest: 'owner', about: 'Change single sign-on and password sign-in settings' },
  'team:delete': { on: 'team', lowest: 'owner', about: 'Delete the team' },
} as const satisfies Record<string, PermissionRule>

export type Permission = keyof typeof permissions

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && Object.hasOwn(permissions, value)
}

export function ruleOf(permission: Permission): PermissionRule {
  return permissions[permission]
}
