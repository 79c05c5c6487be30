import { Fragment, useState, type FormEvent } from 'react'
import { mayGrant, projectRoles, roleAllows, teamRoles, type ProjectRole, type TeamRole } from '@tracewell/policy'
import { useChangeMember, useInvitations, useInvite, useMembers, useRemoveMember, useRevokeInvitation, type CreatedInvitation, type Member } from '../api/members.api.ts'
import { useProjects } from '../api/projects.api.ts'
import { useSession } from '../api/session.api.ts'
import type { Project, Session } from '../api/types.ts'
import { CopyButton } from '../components/copy-button.tsx'
import { Empty, ErrorMessage, Loading } from '../components/status.tsx'
import { formatTime } from '../lib/format.ts'

// The team's people (docs/accounts.md#invitations-and-members): who is in it with which role and
// per-project access, who is invited, and, for those who may, the controls to change that. What
// the signed-in person may do is @tracewell/policy's answer, as the server's: a control they may
// not use is not shown.

/** The team role the console acts with: the person's, or an admin's for a team-key session. */
function actingRole(session: Session): TeamRole {
  return session.role ?? 'admin'
}

export default function MembersPage() {
  const session = useSession().data as Session
  const teamId = session.teamId
  const myRole = actingRole(session)
  const canManage = roleAllows(myRole, 'members:manage')
  const members = useMembers(teamId)
  const projects = useProjects()
  const remove = useRemoveMember(teamId)
  const [open, setOpen] = useState<string | null>(null)
  const projectList = projects.data ?? []

  return (
    <section className="page members" aria-labelledby="members-title">
      <div className="page-header">
        <h1 id="members-title">Members</h1>
        <span className="muted">Who is in {session.teamName}, with which role; a role on a project overrides the team role there, higher or lower</span>
      </div>
      {members.isPending && <Loading label="Loading the members" />}
      {members.isError && <ErrorMessage error={members.error} what="the members" />}
      {members.data?.length === 0 && <Empty>Nobody has an account in this team yet: invite someone below.</Empty>}
      {members.data && members.data.length > 0 && (
        <table className="list-table" aria-label="Members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Projects</th>
              <th scope="col">Joined</th>
              {canManage && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {members.data.map((member) => {
              const manageable = canManage && mayGrant(myRole, member.role)
              return (
                <Fragment key={member.userId}>
                  <MemberRow
                    teamId={teamId}
                    member={member}
                    myRole={myRole}
                    canManage={canManage}
                    manageable={manageable}
                    projects={projectList}
                    accessOpen={open === member.userId}
                    onToggleAccess={() => setOpen(open === member.userId ? null : member.userId)}
                    removing={remove.isPending}
                    onRemove={() => remove.mutate(member.userId)}
                  />
                  {open === member.userId && (
                    <tr className="detail-row">
                      <td colSpan={canManage ? 6 : 5}>
                        <MemberProjectAccess teamId={teamId} member={member} myRole={myRole} editable={manageable} projects={projectList} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              )
            })}
          </tbody>
        </table>
      )}
      {remove.isError && <ErrorMessage error={remove.error} what="the member" action="remove" />}
      {canManage && <InviteForm teamId={teamId} myRole={myRole} projects={projectList} />}
      <Invitations teamId={teamId} canManage={canManage} />
    </section>
  )
}

function MemberRow(props: {
  teamId: string
  member: Member
  myRole: TeamRole
  canManage: boolean
  manageable: boolean
  projects: Project[]
  accessOpen: boolean
  onToggleAccess: () => void
  removing: boolean
  onRemove: () => void
}) {
  const { teamId, member, myRole, canManage, manageable, accessOpen, onToggleAccess, removing, onRemove } = props
  const change = useChangeMember(teamId, member.userId)
  const [armed, setArmed] = useState(false)
  const overrides = member.projectRoles.length
  return (
    <tr>
      <td>{member.name}</td>
      <td>{member.email}</td>
      <td>
        {manageable ? (
          <select aria-label={`Role of ${member.name}`} value={member.role} disabled={change.isPending} onChange={(event) => change.mutate({ role: event.target.value as TeamRole })}>
            {teamRoles.filter((role) => mayGrant(myRole, role)).map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        ) : (
          member.role
        )}
        {change.isError && <ErrorMessage error={change.error} what="the role" action="change" />}
      </td>
      <td>
        <button type="button" className="button small" aria-expanded={accessOpen} aria-label={`Project access of ${member.name}`} onClick={onToggleAccess}>
          {overrides === 0 ? 'Team role everywhere' : overrides === 1 ? '1 project differs' : `${overrides} projects differ`}
        </button>
      </td>
      <td>{formatTime(member.joinedAt)}</td>
      {canManage && (
        <td className="actions">
          {manageable &&
            (armed ? (
              <>
                <button type="button" className="button small danger" disabled={removing} onClick={onRemove}>
                  Remove {member.name}: their sessions end now
                </button>
                <button type="button" className="button small" onClick={() => setArmed(false)}>
                  Keep
                </button>
              </>
            ) : (
              <button type="button" className="button small danger" aria-label={`Remove ${member.name}`} onClick={() => setArmed(true)}>
                Remove
              </button>
            ))}
        </td>
      )}
    </tr>
  )
}

/** A member's role on each project: the team role unless a project says otherwise. */
function MemberProjectAccess(props: { teamId: string; member: Member; myRole: TeamRole; editable: boolean; projects: Project[] }) {
  const { teamId, member, myRole, editable, projects } = props
  const change = useChangeMember(teamId, member.userId)
  const current = Object.fromEntries(member.projectRoles.map((grant) => [grant.projectId, grant.role]))
  return (
    <div className="project-access">
      <ProjectRolesEditor
        projects={projects}
        value={current}
        teamRoleLabel={`Team role (${member.role})`}
        grantable={editable ? projectRoles.filter((role) => mayGrant(myRole, role)) : []}
        disabled={!editable || change.isPending}
        ownerName={member.name}
        onChange={(projectId, role) => change.mutate({ projectRoles: [{ projectId, role }] })}
      />
      {change.isError && <ErrorMessage error={change.error} what="the project role" action="change" />}
    </div>
  )
}

/**
 * One select per project: "Team role", or a role of its own (none hides the project). Roles above
 * the granter's own are not offered; a project role already above it is shown, not offered back.
 */
function ProjectRolesEditor(props: {
  projects: Project[]
  value: Record<string, ProjectRole>
  teamRoleLabel: string
  grantable: readonly ProjectRole[]
  disabled: boolean
  ownerName: string
  onChange: (projectId: string, role: ProjectRole | null) => void
}) {
  const { projects, value, teamRoleLabel, grantable, disabled, ownerName, onChange } = props
  if (projects.length === 0) return <p className="muted">The team has no project yet.</p>
  return (
    <table className="list-table compact" aria-label={`Project roles of ${ownerName}`}>
      <tbody>
        {projects.map((project) => {
          const role = value[project.id]
          const offered = role === undefined || grantable.includes(role) ? grantable : [role, ...grantable]
          return (
            <tr key={project.id}>
              <th scope="row">{project.name}</th>
              <td>
                <select
                  aria-label={`Role of ${ownerName} on ${project.name}`}
                  value={role ?? ''}
                  disabled={disabled}
                  onChange={(event) => onChange(project.id, event.target.value === '' ? null : (event.target.value as ProjectRole))}
                >
                  <option value="">{teamRoleLabel}</option>
                  {offered.map((choice) => (
                    <option key={choice} value={choice}>
                      {choice === 'none' ? 'none (hidden)' : choice}
                    </option>
                  ))}
                </select>
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

function InviteForm({ teamId, myRole, projects }: { teamId: string; myRole: TeamRole; projects: Project[] }) {
  const invite = useInvite(teamId)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<TeamRole>('member')
  const [overrides, setOverrides] = useState<Record<string, ProjectRole>>({})
  const [created, setCreated] = useState<(CreatedInvitation & { email: string }) | null>(null)

  function submit(event: FormEvent) {
    event.preventDefault()
    const projectRoles = Object.entries(overrides).map(([projectId, projectRole]) => ({ projectId, role: projectRole }))
    invite.mutate(
      { email: email.trim(), role, projectRoles },
      {
        onSuccess: (result) => {
          setCreated({ ...result, email: email.trim() })
          setEmail('')
          setOverrides({})
        },
      },
    )
  }

  return (
    <section className="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <form className="inline-form" onSubmit={submit}>
        <label>
          Email
          <input type="email" aria-label="Email to invite" required value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <label>
          Role
          <select aria-label="Role of the invited person" value={role} onChange={(event) => setRole(event.target.value as TeamRole)}>
            {teamRoles.filter((choice) => mayGrant(myRole, choice)).map((choice) => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="button primary" disabled={invite.isPending || email.trim() === ''}>
          {invite.isPending ? 'Inviting…' : 'Invite'}
        </button>
      </form>
      <details>
        <summary>Project access (optional)</summary>
        <ProjectRolesEditor
          projects={projects}
          value={overrides}
          teamRoleLabel="Team role"
          grantable={projectRoles.filter((choice) => mayGrant(myRole, choice))}
          disabled={false}
          ownerName="the invited person"
          onChange={(projectId, projectRole) =>
            setOverrides((previous) => {
              const next = { ...previous }
              if (projectRole === null) delete next[projectId]
              else next[projectId] = projectRole
              return next
            })
          }
        />
      </details>
      {invite.isError && <ErrorMessage error={invite.error} what="the invitation" action="send" />}
      {created && (
        <div className="new-secret" role="status" aria-labelledby="new-invitation">
          <p id="new-invitation">
            <strong>{created.mailed ? `Invitation mailed to ${created.email}.` : `Invitation for ${created.email} made, not mailed: ${created.mailError ?? ''}.`}</strong> The link works once, until{' '}
            {formatTime(created.expiresAt)}; you may also send it yourself.
          </p>
          <div className="secret-row">
            <code className="secret" aria-label="The invitation link">
              {created.url}
            </code>
            <CopyButton text={created.url} />
          </div>
          <button type="button" className="button" onClick={() => setCreated(null)}>
            Done
          </button>
        </div>
      )}
    </section>
  )
}

function Invitations({ teamId, canManage }: { teamId: string; canManage: boolean }) {
  const invitations = useInvitations(teamId)
  const revoke = useRevokeInvitation(teamId)
  if (invitations.isPending) return <Loading label="Loading the invitations" />
  if (invitations.isError) return <ErrorMessage error={invitations.error} what="the invitations" />
  if (invitations.data.length === 0) return null
  return (
    <section className="card" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Open invitations</h2>
      <table className="list-table" aria-label="Open invitations">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Invited by</th>
            <th scope="col">Expires</th>
            {canManage && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {invitations.data.map((invitation) => (
            <tr key={invitation.id} className={invitation.state === 'expired' ? 'revoked' : undefined}>
              <td>{invitation.email}</td>
              <td>{invitation.role}</td>
              <td>{invitation.invitedBy?.name ?? 'a team key'}</td>
              <td>{invitation.state === 'expired' ? `expired ${formatTime(invitation.expiresAt)}` : formatTime(invitation.expiresAt)}</td>
              {canManage && (
                <td className="actions">
                  <button type="button" className="button small danger" aria-label={`Revoke the invitation of ${invitation.email}`} disabled={revoke.isPending} onClick={() => revoke.mutate(invitation.id)}>
                    Revoke
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {revoke.isError && <ErrorMessage error={revoke.error} what="the invitation" action="revoke" />}
    </section>
  )
}
