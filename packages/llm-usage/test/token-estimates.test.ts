import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { deriveLlmUsage, type Attributes } from '../src/index.ts'

// Which token counts are estimates: the span says so, or it is a streamed call of an
// instrumentation known to count streams itself. The attributes are those the libraries set
// (@langtrase/typescript-sdk 6.3.7's openai patch, @traceloop/instrumentation-openai).

const text = (stringValue: string) => ({ stringValue })
const int = (n: number) => ({ intValue: String(n) })
const bool = (boolValue: boolean) => ({ boolValue })

// A streamed chat completion as the Langtrace TypeScript SDK records it: its own counts, swapped.
const langtraceStream: Attributes = {
  'langtrace.sdk.name': text('@langtrase/typescript-sdk'), 'langtrace.service.name': text('openai'), 'gen_ai.request.model': text('gpt-4o-mini'),
  'gen_ai.request.stream': bool(true), 'gen_ai.usage.input_tokens': int(7), 'gen_ai.usage.output_tokens': int(6), 'gen_ai.usage.total_tokens': int(13),
}
const openllmetryCall: Attributes = {
  'gen_ai.provider.name': text('openai'), 'gen_ai.request.model': text('gpt-4o-mini'), 'gen_ai.usage.input_tokens': int(6), 'gen_ai.usage.output_tokens': int(7),
}
const openllmetryScope = '@traceloop/instrumentation-openai'

const estimated = (attributes: Attributes, scope: string | null = null) => deriveLlmUsage(attributes, scope).fields.tokensEstimated

describe('estimated token counts', () => {
  it('marks a streamed call of the Langtrace SDKs, not a plain one', () => {
    assert.equal(estimated(langtraceStream), true)
    assert.equal(estimated({ ...langtraceStream, 'gen_ai.request.stream': bool(false) }), false)
    assert.equal(estimated({ ...langtraceStream, 'gen_ai.request.stream': text('true') }), true, 'a stringified boolean')
  })

  it('marks a streamed call of OpenLLMetry for JavaScript when the span says it streamed', () => {
    assert.equal(estimated({ ...openllmetryCall, 'llm.is_streaming': bool(true) }, openllmetryScope), true)
    assert.equal(estimated({ ...openllmetryCall, 'gen_ai.request.stream': bool(true) }, openllmetryScope), true)
    // 0.27 sets no streaming attribute: such a span reads as a plain call.
    assert.equal(estimated(openllmetryCall, openllmetryScope), false)
  })

  it('leaves a streamed call of an instrumentation that reads the provider’s usage unmarked', () => {
    assert.equal(estimated({ ...openllmetryCall, 'llm.is_streaming': bool(true) }, '@arizeai/openinference-instrumentation-openai'), false)
    assert.equal(estimated({ ...openllmetryCall, 'gen_ai.request.stream': bool(true) }, null), false)
  })

  it('marks counts a span declares estimated, from any instrumentation', () => {
    assert.equal(estimated({ ...openllmetryCall, 'gen_ai.usage.estimated': bool(true) }), true)
    assert.equal(estimated({ ...openllmetryCall, 'llm.usage.estimated': text('true') }), true)
    assert.equal(estimated({ ...openllmetryCall, 'gen_ai.usage.estimated': bool(false) }), false)
  })

  it('marks nothing on a span without counts', () => {
    const { 'gen_ai.usage.input_tokens': _i, 'gen_ai.usage.output_tokens': _o, 'gen_ai.usage.total_tokens': _t, ...noCounts } = langtraceStream
    assert.equal(estimated(noCounts), false)
    assert.equal(estimated({ 'gen_ai.usage.estimated': bool(true) }), false)
  })
})
