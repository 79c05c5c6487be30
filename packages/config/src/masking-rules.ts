import { Value } from '@sinclair/typebox/value'
import { compileRules, MaskingRulesSchema, type MaskingRule } from '@tracewell/masking'

/** MASKING_DEFAULT_RULES read: its rules, checked as the API checks a project's. Throws the reason, naming the rule. */
export function defaultMaskingRules(settings: { MASKING_DEFAULT_RULES: string }): MaskingRule[] {
  return parseMaskingRules(settings.MASKING_DEFAULT_RULES)
}

function parseMaskingRules(text: string): MaskingRule[] {
  let rules: unknown
  try {
    rules = JSON.parse(text)
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`)
  }
  const problem = Value.Errors(MaskingRulesSchema, rules).First()
  if (problem) throw new Error(`${problem.path || '/'}: ${problem.message}`)
  compileRules(rules as MaskingRule[], '')
  return rules as MaskingRule[]
}

/** For `settingChecks` in the schemas of the services that read MASKING_DEFAULT_RULES. */
export const maskingSettingChecks = { MASKING_DEFAULT_RULES: (value: unknown) => void parseMaskingRules(value as string) }
