import {
  addResultSpend,
  completeResult,
  createTraceJudgments,
  findDatasetItem,
  findExperimentById,
  findExperimentResult,
  findPromptVersion,
  recordResultAttempt,
  recordResultError,
  type Db,
  type DatasetItemDto,
  type ExperimentDto,
} from '@tracewell/db'
import { compileTemplate, expectedOutputKey, inputText, missingVariables, promptMessages, variablesOfInput, variableText } from '@tracewell/llm-messages'
import { noCost, type SpanCost } from '@tracewell/llm-usage'
import { storeSpans } from '@tracewell/write-path'
import { callChat, callCost, derivedIds, LlmCallError, llmCallSpan, ModelCallError, openConnection, type ChatAnswer, type ChatRequestMessage } from '@tracewell/llm-calls'
import type { Outbound } from '@tracewell/outbound'

// One experiment item: the experiment's prompt version, its variables filled from the item's
// input, sent to the experiment's model through its LLM connection. The call is stored as a trace
// of the project (tagged tracewell.experiment.id), the result row keeps the output, latency,
// tokens and cost, and each of the experiment's evaluators gets a pending judgment of the trace.

export interface ExperimentProcessorOptions {
  db: Db
  encryptionKey: Buffer
  callTimeoutMs: number
  outbound: Outbound
  /** Queues the judgments of the result's trace, all of one project (the evaluations queue). */
  judge: (projectId: string, judgmentIds: string[]) => Promise<void>
}

/** The experiment attributes every span of an experiment carries, to find them in the trace list. */
export const experimentIdKey = 'tracewell.experiment.id'

interface Prepared {
  experiment: ExperimentDto
  item: DatasetItemDto
  messages: ChatRequestMessage[]
  settings: Record<string, unknown>
}

async function prepare(db: Db, experiment: ExperimentDto, datasetItemId: string): Promise<Prepared> {
  const item = await findDatasetItem(db, experiment.datasetId, datasetItemId, experiment.datasetVersion)
  if (item === undefined) throw new ModelCallError(`the dataset item ${datasetItemId} is not in version ${experiment.datasetVersion} of the dataset`, false)
  if (experiment.promptsetId === null || experiment.promptVersion === null) throw new ModelCallError('the experiment names no prompt version', false)
  const prompt = await findPromptVersion(db, experiment.promptsetId, experiment.promptVersion)
  if (prompt === undefined) throw new ModelCallError(`version ${experiment.promptVersion} of the prompt no longer exists`, false)
  const values = variablesOfInput(item.input)
  const missing = missingVariables(compileTemplate(prompt.value, prompt.variables), values)
  if (missing.length > 0) throw new ModelCallError(`the item's input has no value for the prompt's variable${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`, false)
  return { experiment, item, messages: promptMessages(prompt.value, prompt.variables, values), settings: { ...prompt.modelSettings, ...experiment.modelSettings } }
}

/** The output a result keeps: the answer's text, or {content, toolCalls} when the model called tools. */
const outputOf = (answer: ChatAnswer): unknown => (answer.toolCalls.length === 0 ? answer.text : { content: answer.text, toolCalls: answer.toolCalls })

/**
 * Runs one pending result. Throws an LlmCallError when it failed: retryable ones are tried again by
 * the queue until `final`, when the result is marked failed (with a trace of the failed call);
 * others fail it at once.
 */
export async function processExperimentResult(options: ExperimentProcessorOptions, resultId: string, final: boolean): Promise<'completed' | 'gone'> {
  const { db } = options
  const result = await findExperimentResult(db, resultId)
  // Deleted with its experiment, or run already (a redelivered queue job).
  if (result === undefined || result.status !== 'pending') return 'gone'
  const experiment = await findExperimentById(db, result.experimentId)
  if (experiment === undefined) return 'gone'
  const attempt = await recordResultAttempt(db, resultId)
  // One trace per result; each attempt's call its own span of it, so that every paid call is stored once.
  const { traceId, spanId: firstSpanId } = derivedIds(`experiment-result:${resultId}`)
  const spanId = attempt === 1 ? firstSpanId : derivedIds(`experiment-result:${resultId}:${attempt}`).spanId
  let prepared: Prepared | undefined
  let answer: ChatAnswer | undefined
  let cost: SpanCost = noCost
  let counted = false
  const startedAtMs = Date.now()
  try {
    prepared = await prepare(db, experiment, result.datasetItemId)
    const connection = await openConnection(db, experiment.connectionId, options.encryptionKey)
    const model = experiment.model ?? ''
    answer = await callChat({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, model, messages: prepared.messages, settings: prepared.settings, timeoutMs: options.callTimeoutMs, outbound: options.outbound })
    cost = await callCost(db, experiment.projectId, answer, new Date(startedAtMs))
    await storeSpans(db, [span(prepared, { traceId, spanId, startedAtMs, answer, cost })])
    await completeResult(db, resultId, {
      output: outputOf(answer),
      traceId,
      spanId,
      model: answer.model,
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      costUsd: cost.totalCostUsd,
      latencyMs: answer.latencyMs,
    })
    counted = true
    await options.judge(experiment.projectId, await createTraceJudgments(db, experiment.projectId, experiment.evaluatorIds, traceId))
    return 'completed'
  } catch (error) {
    const failure = error instanceof LlmCallError ? error : new ModelCallError(error instanceof Error ? error.message : String(error), true)
    const last = final || !failure.retryable
    // A call that answered was paid for, whatever failed after it: its span and tokens count.
    if (answer !== undefined && !counted) {
      await addResultSpend(db, resultId, { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens, costUsd: cost.totalCostUsd }).catch(() => undefined)
    }
    // The last failed call is a trace too (status error), so the failure shows beside the others.
    if ((last || answer !== undefined) && prepared !== undefined) {
      await storeSpans(db, [span(prepared, { traceId, spanId, startedAtMs, error: failure.message, cost, ...(answer === undefined ? {} : { answer }) })]).catch(() => undefined)
    }
    await recordResultError(db, resultId, failure.message, last, last && prepared !== undefined ? traceId : null)
    throw failure
  }
}

function span(prepared: Prepared, call: { traceId: string; spanId: string; startedAtMs: number; answer?: ChatAnswer; error?: string; cost: SpanCost }) {
  const { experiment, item } = prepared
  return llmCallSpan({
    origin: 'experiment',
    projectId: experiment.projectId,
    traceId: call.traceId,
    spanId: call.spanId,
    name: `experiment ${experiment.name}`,
    startedAtMs: call.startedAtMs,
    requestedModel: experiment.model ?? '',
    messages: prepared.messages,
    settings: prepared.settings,
    ...(call.answer === undefined ? {} : { answer: call.answer }),
    ...(call.error === undefined ? {} : { error: call.error }),
    cost: call.cost,
    inputText: inputText(item.input),
    attributes: {
      [experimentIdKey]: experiment.id,
      'tracewell.experiment.name': experiment.name,
      'tracewell.dataset.id': experiment.datasetId,
      'tracewell.dataset.version': experiment.datasetVersion,
      'tracewell.dataset.item.id': item.id,
      ...(item.expectedOutput === null ? {} : { [expectedOutputKey]: variableText(item.expectedOutput) }),
      ...(experiment.promptsetId === null ? {} : { 'tracewell.prompt.promptset_id': experiment.promptsetId }),
      ...(experiment.promptVersion === null ? {} : { 'tracewell.prompt.version': experiment.promptVersion }),
    },
  })
}
