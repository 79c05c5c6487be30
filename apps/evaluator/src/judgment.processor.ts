import { openSecret } from '@tracewell/auth'
import {
  addAnnotationQueueItems,
  completeJudgment,
  findJudgment,
  findEvaluatorById,
  findPromptByPromptsetName,
  findSealedLlmConnection,
  findTraceSpans,
  llmConnectionKeyContext,
  recordJudgmentAttempt,
  recordJudgmentError,
  recordScore,
  ScoreValueError,
  skipJudgment,
  type Db,
  type EvaluatorDto,
} from '@tracewell/db'
import type { Outbound } from '@tracewell/outbound'
import { askJudge, JudgeError, type Judgment } from './judge.client.ts'
import { recordJudgeSpend } from './judge-spend.ts'
import { judgeRequestOf, type JudgeRequest } from '@tracewell/llm-messages'

// One judgment: the evaluator's prompt over the trace's input and output, sent to its judge; the
// answer becomes the score (source eval, the reasoning as its comment), and the judgment's row
// records the model and time, or the error, and the tokens and cost of every call of every
// attempt (judge-spend.ts). A trace without the input or output the template asks for is skipped
// with the reason, never sent (judgeSkipReason).

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
export async function processJudgment(options: ProcessorOptions, jobId: string, final: boolean): Promise<'completed' | 'skipped' | 'gone'> {
  const { db } = options
  const job = await findJudgment(db, jobId)
  // Deleted with its evaluator, or judged already (a redelivered queue job).
  if (job === undefined || job.status !== 'pending') return 'gone'
  const attempt = await recordJudgmentAttempt(db, jobId)
  if (attempt === null) return 'gone'
  let evaluator: EvaluatorDto | undefined
  try {
    evaluator = await findEvaluatorById(db, job.evaluatorId)
    if (evaluator === undefined) return 'gone'
    const request = await judgeRequest(db, evaluator, job.traceId)
    if (request.skipped !== null) {
      await skipJudgment(db, jobId, request.skipped)
      return 'skipped'
    }
    const judgment = await judge(options, evaluator, request.prompt)
    // Counted before the score is: a score the project's configuration refuses was paid for too.
    await recordJudgeSpend(db, { jobId, attempt, evaluator, traceId: job.traceId }, judgment.calls)
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
    await completeJudgment(db, jobId, { scoreId: score.id, judgeModel: judgment.model, latencyMs: judgment.latencyMs })
    // Scored low: people look at it too (an item already in the queue stays where it is).
    const review = evaluator.reviewQueue
    if (review !== null && judgment.score < review.below) await addAnnotationQueueItems(db, review.queueId, 'trace', [job.traceId])
    return 'completed'
  } catch (error) {
    const failure = error instanceof JudgeError ? error : new JudgeError(error instanceof Error ? error.message : String(error), true)
    if (evaluator !== undefined) await recordJudgeSpend(db, { jobId, attempt, evaluator, traceId: job.traceId }, failure.calls)
    await recordJudgmentError(db, jobId, failure.message, final || !failure.retryable)
    throw failure
  }
}

/** The evaluator's template filled with the trace's input and output, or why the trace is not judged. */
async function judgeRequest(db: Db, evaluator: EvaluatorDto, traceId: string): Promise<JudgeRequest> {
  const template = await templateOf(db, evaluator)
  const spans = await findTraceSpans(db, evaluator.projectId, traceId)
  if (spans.length === 0) throw new JudgeError('the trace has no spans (deleted?)', false)
  return judgeRequestOf(template, spans)
}

async function judge(options: ProcessorOptions, evaluator: EvaluatorDto, prompt: string): Promise<Judgment> {
  const { db } = options
  const connection = await findSealedLlmConnection(db, evaluator.connectionId)
  if (connection === undefined) throw new JudgeError('the evaluator\u2019s LLM connection no longer exists', false)
  let apiKey: string
  try {
    apiKey = openSecret(connection.apiKeySealed, options.encryptionKey, llmConnectionKeyContext(connection.projectId))
  } catch {
    throw new JudgeError('the LLM connection\u2019s key does not open with this LLM_CONNECTION_ENCRYPTION_KEY (was the key changed?)', false)
  }
  return askJudge({ baseUrl: connection.baseUrl, apiKey, model: evaluator.model, prompt, timeoutMs: options.judgeTimeoutMs, outbound: options.outbound })
}

async function templateOf(db: Db, evaluator: EvaluatorDto): Promise<string> {
  if (evaluator.prompt !== null) return evaluator.prompt
  const ref = evaluator.promptRef as { name: string; label: string }
  const prompt = await findPromptByPromptsetName(db, evaluator.projectId, ref.name, ref.label)
  if (prompt === undefined) throw new JudgeError(`the prompt registry ${JSON.stringify(ref.name)} has no version labelled ${JSON.stringify(ref.label)}`, false)
  return prompt.value
}
