/** A rule that cannot run: `path` names it (`body/rules/2/pattern`), the message says why. */
export class MaskingRuleError extends Error {
  override name = 'MaskingRuleError'
  readonly path: string

  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`)
    this.path = path
  }
}
