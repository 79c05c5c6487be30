import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain'
import * as CallbackManagerModule from '@langchain/core/callbacks/manager'
import { ChatOpenAI } from '@langchain/openai'
import { storedTrace } from '../../src/all-in-one.ts'
import { fakeUsage } from '../../src/fake-openai.server.ts'
import { assertFoundBySearchAndFilter } from '../../src/search-expectations.ts'
import { startLlmStack, type LlmStack } from '../../src/llm-stack.ts'

// OpenInference's LangChain instrumentation (@arizeai/openinference-instrumentation-langchain)
// around LangChain's ChatOpenAI: its spans name the vendor only in LangChain's run metadata
// (`metadata` JSON, ls_provider), which must become the vendor column, and its llm.* token counts
// and model the same columns and cost as every other library's.

describe('OpenInference instrumentation of LangChain', () => {
  let llm: LlmStack
  let model: ChatOpenAI

  before(async () => {
    llm = await startLlmStack()
    new LangChainInstrumentation({ tracerProvider: llm.provider }).manuallyInstrument(CallbackManagerModule)
    model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: llm.fake.baseURL } })
  })
  after(() => llm?.stop())

  it('stores a LangChain chat call with its vendor from the run metadata, tokens and cost, found by search and filter', async () => {
    const traceId = await llm.turn(() => model.invoke([{ role: 'user', content: 'How long do refunds take?' }]))
    const spans = await storedTrace(llm.stack, traceId, 2)
    const call = spans.find((span) => span.llmModel !== null)
    assert.ok(call, JSON.stringify(spans.map((span) => [span.name, span.llmModel])))
    assert.equal(call.llmVendor, 'openai', 'from metadata.ls_provider')
    assert.deepEqual([call.inputTokens, call.outputTokens, call.totalTokens], [fakeUsage.prompt_tokens, fakeUsage.completion_tokens, fakeUsage.total_tokens])
    assert.ok((call.totalCostUsd ?? 0) > 0, 'priced from the price table')
    const row = await assertFoundBySearchAndFilter(llm.stack, traceId, { words: ['refunds', 'business'], model: 'gpt-4o-mini', responseModel: call.llmResponseModel === call.llmModel ? null : call.llmResponseModel, vendor: 'openai' }, 'OpenInference LangChain')
    assert.equal(row.totalTokens, fakeUsage.total_tokens)
  })
})
