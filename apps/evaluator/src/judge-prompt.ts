// The judge's messages: a fixed instruction that asks for the JSON answer, and the evaluator's
// template with the trace's input and output in place of {{input}} and {{output}}, and, for an
// experiment's output, the dataset item's expected output in place of {{expected_output}}.

export const judgeInstruction =
  'You are an evaluator of an AI application’s answers. Judge what the user message asks you to judge. ' +
  'Answer with a JSON object only: {"score": <number>, "reasoning": "<one or two sentences on why>"}.'

/** The template filled: `{{input}}`, `{{output}}` and `{{expected_output}}` (spaces inside the braces allowed; no expected output: empty); other text is left as written. */
export function fillJudgePrompt(template: string, trace: { input: string; output: string; expectedOutput?: string }): string {
  return template.replace(/\{\{\s*(input|output|expected_output)\s*\}\}/g, (_match, name: 'input' | 'output' | 'expected_output') =>
    name === 'expected_output' ? (trace.expectedOutput ?? '') : trace[name],
  )
}

/** The JSON schema of the answer, for endpoints with structured outputs. */
export const judgmentSchema = {
  type: 'object',
  properties: { score: { type: 'number' }, reasoning: { type: 'string' } },
  required: ['score', 'reasoning'],
  additionalProperties: false,
} as const
