import { Type, type Static } from '@sinclair/typebox'
import { DETECTOR_NAMES, type DetectorName } from './detectors.ts'

/** One masking rule as the API and MASKING_DEFAULT_RULES give it (docs/api.md#masking). */
export const MaskingRuleSchema = Type.Object(
  {
    // An enum rather than a union of literals, so that a wrong name is refused as "one of the allowed values".
    detector: Type.Unsafe<DetectorName>({
      type: 'string',
      enum: [...DETECTOR_NAMES],
      description: 'email, phone, credit_card (Luhn-checked), iban (mod-97-checked), ip, secret (API keys and tokens), or regex with pattern',
    }),
    pattern: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'the regex detector’s pattern, in RE2 syntax (no backreferences or lookaround); only with detector regex' }),
    ),
    attributes: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
        minItems: 1,
        maxItems: 50,
        description: 'glob patterns of the attribute keys the rule applies to (* any characters, ? one); absent: every attribute, span and event names and status messages too',
      }),
    ),
    replacement: Type.Optional(Type.String({ maxLength: 200, description: 'what a match becomes, literally; default [REDACTED:<detector>]' })),
  },
  { additionalProperties: false },
)
export type MaskingRule = Static<typeof MaskingRuleSchema>

export const MAX_MASKING_RULES = 50

export const MaskingRulesSchema = Type.Array(MaskingRuleSchema, { maxItems: MAX_MASKING_RULES, description: 'applied in order, each to what the previous left' })
