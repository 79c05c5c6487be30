import { openSecret } from '@tracewell/auth'
import {
  completeJob,
  findEvaluationJob,
  findEvaluatorById,
  findRegistryPrompt,
  findSealedLlmConnection,
  findTraceSpans,
  llmConnectionKeyContext,
  recordJobAttempt,
  recordJobError,
  recordScore,
  ScoreValueError,
  type Db,
  type EvaluatorDto,
} from '@tracewell/db'
import { callCost } from '@tracewell/llm-calls'
import type { Outbound } from '@tracewell/outbound'
import { askJudge, JudgeError, type Judgment } from './judge.client.ts'
import { fillJudgePrompt } from './judge-prompt.ts'
import { traceInputOutput } from './trace-io.ts'

// One judgment: the evaluator's prompt over the trace's input and output, sent to its judge; the
// answer becomes the score (source eval, the reasoning as its comment), and the judgment's row
// records the model, tokens, cost and time, or the error.

export interface ProcessorOptions {
  db: Db
  /** LLM_CONNECTION_ENCRYPTION_KEY's 32 bytes. */
  encryptionKey: Buffer
  judgeTimeoutMs: number
  outbound: Outbound
}

/** The score an evaluator gives a trace: one per evaluator and trace, a later judgment (a run) replacing it. */
export const evalScoreId = (evaluatorId: string, traceId: string) => `eval:${evaluatorId}:${traceId}`

/**
 * Judges one pending judgment. Throws a JudgeError when it failed: `retryable` errors are tried
 * again by the queue (the row stays pending, its last error recorded) until `final`, when the row
 * is marked failed; others fail it at once.
 */
export async function processJudgment(options: ProcessorOptions, jobId: string, final: boolean): Promise<'completed' | 'gone'> {
  const { db } = options
  const job = await findEvaluationJob(db, jobId)
  // Deleted with its evaluator, or judged already (a redelivered queue job).
  if (job === undefined || job.status !== 'pending') return 'gone'
  await recordJobAttempt(db, jobId)
  try {
    const evaluator = await findEvaluatorById(db, job.evaluatorId)
    if (evaluator === undefined) return 'gone'
    const judgment = await judge(options, evaluator, job.traceId)
    const { score } = await recordScore(db, {
      projectId: job.projectId,
      id: evalScoreId(evaluator.id, job.traceId),
      traceId: job.traceId,
      spanId: null,
      sessionId: null,
      name: evaluator.scoreName,
      value: judgment.score,
      comment: judgment.reasoning === '' ? null : judgment.reasoning,
      source: 'eval',
      author: `evaluator:${evaluator.id}`,
      evaluatorId: evaluator.id,
    }, 'the judge\u2019s score').catch((error: unknown) => {
      // The project's configuration of the score refuses it (out of range, say): the judge may answer better next time.
      if (error instanceof ScoreValueError) throw new JudgeError(error.message, true)
      throw error
    })
    await completeJob(db, jobId, {
      scoreId: score.id,
      judgeModel: judgment.model,
      inputTokens: judgment.inputTokens,
      outputTokens: judgment.outputTokens,
      costUsd: await judgeCost(db, job.projectId, judgment),
      latencyMs: judgment.latencyMs,
    })
    return 'completed'
  } catch (error) {
    const failure = error instanceof JudgeError ? error : new JudgeError(error instanceof Error ? error.message : String(error), true)
    await recordJobError(db, jobId, failure.message, final || !failure.retryable)
    throw failure
  }
}

async function judge(options: ProcessorOptions, evaluator: EvaluatorDto, traceId: string): Promise<Judgment> {
  const { db } = options
  const connection = await findSealedLlmConnection(db, evaluator.connectionId)
  if (connection === undefined) throw new JudgeError('the evaluator\u2019s LLM connection no longer exists', false)
  let apiKey: string
  try {
    apiKey = openSecret(connection.apiKeySealed, options.encryptionKey, llmConnectionKeyContext(connection.projectId))
  } catch {
    throw new JudgeError('the LLM connection\u2019s key does not open with this LLM_CONNECTION_ENCRYPTION_KEY (was the key changed?)', false)
  }
  const template = await templateOf(db, evaluator)
  const spans = await findTraceSpans(db, evaluator.projectId, traceId)
  if (spans.length === 0) throw new JudgeError('the trace has no spans (deleted?)', false)
  return askJudge({ baseUrl: connection.baseUrl, apiKey, model: evaluator.model, prompt: fillJudgePrompt(template, traceInputOutput(spans)), timeoutMs: options.judgeTimeoutMs, outbound: options.outbound })
}

async function templateOf(db: Db, evaluator: EvaluatorDto): Promise<string> {
  if (evaluator.prompt !== null) return evaluator.prompt
  const ref = evaluator.promptRef as { name: string; label: string }
  const prompt = await findRegistryPrompt(db, evaluator.projectId, ref.name, ref.label)
  if (prompt === undefined) throw new JudgeError(`the prompt registry ${JSON.stringify(ref.name)} has no version labelled ${JSON.stringify(ref.label)}`, false)
  return prompt.value
}

/** The judge call's cost: the project's own price for the model, else the price table's; null when neither knows it. */
async function judgeCost(db: Db, projectId: string, judgment: Judgment): Promise<number | null> {
  return (await callCost(db, projectId, judgment)).totalCostUsd
}
