import { Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { compileRules, MaskingRuleSchema, MAX_MASKING_RULES, type MaskingRule } from '@tracewell/masking'

// The API's rule schema with the detector as a plain string: TypeBox's checker does not read the
// enum the API's validator does, and compileRules names a wrong detector itself.
const RulesSettingSchema = Type.Array(Type.Object({ ...MaskingRuleSchema.properties, detector: Type.String() }, { additionalProperties: false }), { maxItems: MAX_MASKING_RULES })

/** MASKING_DEFAULT_RULES read: its rules, checked as the API checks a project's. Throws the reason, naming the rule. */
export function defaultMaskingRules(settings: { MASKING_DEFAULT_RULES: string }): MaskingRule[] {
  return parseMaskingRules(settings.MASKING_DEFAULT_RULES)
}

function parseMaskingRules(text: string): MaskingRule[] {
  let rules: unknown
  try {
    rules = JSON.parse(text)
  } catch (error) {
    throw new Error(`not JSON (${(error as Error).message})`, { cause: error })
  }
  const problem = Value.Errors(RulesSettingSchema, rules).First()
  if (problem) throw new Error(`${problem.path || '/'}: ${problem.message}`)
  compileRules(rules as MaskingRule[], '')
  return rules as MaskingRule[]
}

/** For `settingChecks` in the schemas of the services that read MASKING_DEFAULT_RULES. */
export const maskingSettingChecks = { MASKING_DEFAULT_RULES: (value: unknown) => void parseMaskingRules(value as string) }
