// The judge's fixed instruction, which asks for the JSON answer; the evaluator's template, filled
// with the trace's input and output, is the user message (@tracewell/llm-messages judge-input.ts).

export const judgeInstruction =
  'You are an evaluator of an AI application’s answers. Judge what the user message asks you to judge. ' +
  'Answer with a JSON object only: {"score": <number>, "reasoning": "<one or two sentences on why>"}.'

/** The JSON schema of the answer, for endpoints with structured outputs. */
export const judgmentSchema = {
  type: 'object',
  properties: { score: { type: 'number' }, reasoning: { type: 'string' } },
  required: ['score', 'reasoning'],
  additionalProperties: false,
} as const
