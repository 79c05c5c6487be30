// When a failed delivery is tried again: after the base delay, doubled each try, at most an hour
// apart, for 24 hours from the notification's creation; then it is given up (status failed). With
// the default 30 s base that is tries at about 0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5 min, then hourly.

export const retryWindowMs = 24 * 3_600_000
const maxDelayMs = 3_600_000

/** When to try again after try number `attempt` (from 1) failed, or null when the 24 h are over. */
export function retryAt(attempt: number, createdAt: Date, baseMs: number, now = new Date()): Date | null {
  const delay = Math.min(baseMs * 2 ** Math.min(attempt - 1, 30), maxDelayMs)
  const at = new Date(now.getTime() + delay)
  return at.getTime() - createdAt.getTime() > retryWindowMs ? null : at
}
