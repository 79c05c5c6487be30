// The judge's messages: a fixed instruction that asks for the JSON answer, and the evaluator's
// template with the trace's input and output in place of {{input}} and {{output}}.

export const judgeInstruction =
  'You are an evaluator of an AI application’s answers. Judge what the user message asks you to judge. ' +
  'Answer with a JSON object only: {"score": <number>, "reasoning": "<one or two sentences on why>"}.'

/** The template filled: `{{input}}` and `{{output}}` (spaces inside the braces allowed); other text is left as written. */
export function fillJudgePrompt(template: string, trace: { input: string; output: string }): string {
  return template.replace(/\{\{\s*(input|output)\s*\}\}/g, (_match, name: 'input' | 'output') => trace[name])
}

/** The JSON schema of the answer, for endpoints with structured outputs. */
export const judgmentSchema = {
  type: 'object',
  properties: { score: { type: 'number' }, reasoning: { type: 'string' } },
  required: ['score', 'reasoning'],
  additionalProperties: false,
} as const
