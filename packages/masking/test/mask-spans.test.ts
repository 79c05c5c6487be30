import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeTraceBody } from '@tracewell/otlp'
import { compileRules, maskerOf, MaskingRuleError, maskTraceBody } from '../src/index.ts'

const traceId = '5b8efff798038103d269b633813fc60c'
const prompts = JSON.stringify([{ role: 'user', content: 'Mail me at carol@example.com, card 4111111111111111', id: 12345678901234567890n.toString() }])

const otlpBody = () =>
  Buffer.from(
    JSON.stringify({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'chat' } }, { key: 'host.ip', value: { stringValue: '10.1.2.3' } }] },
          scopeSpans: [
            {
              scope: { name: 'langtrace', version: '1.0' },
              spans: [
                {
                  traceId,
                  spanId: 'eee19b7ec3c1b174',
                  name: 'answer dave@example.com',
                  kind: 3,
                  startTimeUnixNano: '1733450000000000000',
                  endTimeUnixNano: '1733450001000000000',
                  attributes: [
                    { key: 'llm.prompts', value: { stringValue: prompts } },
                    { key: 'user.id', value: { stringValue: 'erin@example.com' } },
                    { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
                    { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'frank@example.com' }, { intValue: '7' }] } } },
                    { key: 'meta', value: { kvlistValue: { values: [{ key: 'owner', value: { stringValue: 'gina@example.com' } }] } } },
                    { key: 'numbers', value: { stringValue: '{"card": 4111111111111111, "big": 12345678901234567890}' } },
                  ],
                  events: [{ timeUnixNano: '1733450000500000000', name: 'sent to hal@example.com', attributes: [{ key: 'to', value: { stringValue: 'hal@example.com' } }] }],
                  links: [{ traceId, spanId: 'aaa19b7ec3c1b174', attributes: [{ key: 'from', value: { stringValue: 'ivy@example.com' } }] }],
                  status: { code: 2, message: 'failed for judy@example.com' },
                },
              ],
            },
          ],
        },
      ],
    }),
  )

describe('masking decoded spans', () => {
  const masker = maskerOf([{ detector: 'email' }, { detector: 'credit_card' }, { detector: 'ip', attributes: ['host.*'] }])

  for (const [label, format, body] of [
    ['a JSON body, patched', 'json', otlpBody()],
    ['a JSON body whose literals are spelled otherwise, written again', 'json', Buffer.from(otlpBody().toString().replaceAll('@', '\\u0040'))],
  ] as const)
  it(`masks every place a value can hide, keeps JSON valid, and writes what the writer reads: ${label}`, () => {
    const decoded = decodeTraceBody(body, format)
    const result = maskTraceBody(body, format, decoded.spans, masker)
    assert.ok(result)
    const masked = result.body
    const text = masked.toString()
    for (const secret of ['example.com', '4111111111111111', '10.1.2.3']) assert.ok(!text.includes(secret), `${secret} left in ${text}`)

    const [span] = decodeTraceBody(masked, 'json').spans
    assert.ok(span)
    assert.equal(span.name, 'answer [REDACTED:email]')
    assert.equal(span.statusMessage, 'failed for [REDACTED:email]')
    assert.equal(span.userId, '[REDACTED:email]', 'derived fields follow the masked attributes')
    assert.equal(span.llmModel, 'gpt-4o')
    assert.equal(span.serviceName, 'chat')
    assert.equal(span.scopeName, 'langtrace')
    const parsedPrompts = JSON.parse((span.attributes['llm.prompts'] as { stringValue: string }).stringValue)
    assert.deepEqual(parsedPrompts, [{ role: 'user', content: 'Mail me at [REDACTED:email], card [REDACTED:credit_card]', id: '12345678901234567890' }])
    assert.equal((span.attributes.numbers as { stringValue: string }).stringValue, '{"card": "[REDACTED:credit_card]", "big": 12345678901234567890}')
    assert.deepEqual(span.attributes.tags, { arrayValue: { values: [{ stringValue: '[REDACTED:email]' }, { intValue: '7' }] } })
    assert.deepEqual(span.attributes.meta, { kvlistValue: { values: [{ key: 'owner', value: { stringValue: '[REDACTED:email]' } }] } })
    assert.deepEqual(span.resourceAttributes['host.ip'], { stringValue: '[REDACTED:ip]' })
    assert.equal(span.events[0]?.name, 'sent to [REDACTED:email]')
    assert.deepEqual(span.events[0]?.attributes.to, { stringValue: '[REDACTED:email]' })
    assert.deepEqual(span.links[0]?.attributes.from, { stringValue: '[REDACTED:email]' })
    assert.equal(span.startTimeUnixNano, '1733450000000000000')
    assert.equal(span.statusCode, 2)
  })

  it('leaves a body without a match as it came', () => {
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId, spanId: 'eee19b7ec3c1b174', name: 'plain', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] }))
    assert.equal(maskTraceBody(body, 'json', decodeTraceBody(body, 'json').spans, masker), null)
  })

  it('patches a masked string where it is a string, not where its text ends another one after an escaped quote', () => {
    const attributes = [
      { key: 'quote', value: { stringValue: 'she said "kim@example.com' } },
      { key: 'user.id', value: { stringValue: 'kim@example.com' } },
      { key: 'again', value: { stringValue: 'kim@example.com' } },
    ]
    // Indented, so that a body written again (not patched) would show.
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId, spanId: 'eee19b7ec3c1b174', name: 'n', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', attributes }] }] }] }, null, 1))
    const result = maskTraceBody(body, 'json', decodeTraceBody(body, 'json').spans, maskerOf([{ detector: 'email' }]))
    assert.ok(result)
    const text = result.body.toString()
    assert.equal(text, body.toString().replaceAll('kim@example.com', '[REDACTED:email]'))
    const values = decodeTraceBody(result.body, 'json').spans[0]?.attributes
    assert.deepEqual(values, { quote: { stringValue: 'she said "[REDACTED:email]' }, 'user.id': { stringValue: '[REDACTED:email]' }, again: { stringValue: '[REDACTED:email]' } })
  })

  it('patches a long masked string whose start stands again, shorter, at the end of the body', () => {
    const long = `kim@example.com ${'asked about the order '.repeat(8)}`
    const span = { traceId, spanId: 'eee19b7ec3c1b174', name: 'n', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: [{ key: 'prompt', value: { stringValue: long } }], status: { code: 2, message: long.slice(0, 80) } }
    const body = Buffer.from(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }))
    const result = maskTraceBody(body, 'json', decodeTraceBody(body, 'json').spans, maskerOf([{ detector: 'email' }]))
    assert.equal(result?.body.toString(), body.toString().replaceAll('kim@example.com', '[REDACTED:email]'))
  })

  it('applies a rule with attribute globs to those keys only, never to names', () => {
    const scoped = maskerOf([{ detector: 'email', attributes: ['llm.*'] }])
    const { spans } = decodeTraceBody(otlpBody(), 'json')
    scoped.maskSpans(spans)
    assert.equal(spans[0]?.name, 'answer dave@example.com')
    assert.deepEqual(spans[0]?.attributes['user.id'], { stringValue: 'erin@example.com' })
    assert.ok(!(spans[0]?.attributes['llm.prompts'] as { stringValue: string }).stringValue.includes('carol@'))
  })
})

describe('a string met in several places of a body', () => {
  const spanWith = (attributes: Record<string, string>) =>
    Buffer.from(
      JSON.stringify({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  { traceId, spanId: 'eee19b7ec3c1b174', name: 'x', kind: 1, startTimeUnixNano: '1', endTimeUnixNano: '2', attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })) },
                ],
              },
            ],
          },
        ],
      }),
    )

  it('is masked where rules apply to it, even where the same string stands unmasked first', () => {
    const scoped = maskerOf([{ detector: 'email', attributes: ['user.*'] }])
    const body = spanWith({ contact: 'ann@example.com', 'user.email': 'ann@example.com' })
    const result = maskTraceBody(body, 'json', decodeTraceBody(body, 'json').spans, scoped)
    assert.ok(result)
    const [span] = decodeTraceBody(result.body, 'json').spans
    assert.deepEqual(span?.attributes['user.email'], { stringValue: '[REDACTED:email]' })
  })

  it('becomes different things under different rules: the body is written again with each', () => {
    const scoped = maskerOf([{ detector: 'email', attributes: ['user.*'] }, { detector: 'email', attributes: ['contact'], replacement: '<contact>' }])
    const body = spanWith({ 'user.email': 'ann@example.com', contact: 'ann@example.com' })
    const result = maskTraceBody(body, 'json', decodeTraceBody(body, 'json').spans, scoped)
    const [span] = decodeTraceBody(result?.body ?? Buffer.alloc(0), 'json').spans
    assert.deepEqual(span?.attributes['user.email'], { stringValue: '[REDACTED:email]' })
    assert.deepEqual(span?.attributes.contact, { stringValue: '<contact>' })
  })
})

describe('JSON held in a string', () => {
  const parsedAfter = (rules: Parameters<typeof maskerOf>[0], document: unknown) => JSON.parse(maskerOf(rules).maskText(JSON.stringify(document)))

  it('stays valid JSON when a match starts right after an escape', () => {
    assert.deepEqual(parsedAfter([{ detector: 'email' }], { content: 'line\nbob@example.com\t\\carl@example.com' }), { content: 'line\n[REDACTED:email]\t\\[REDACTED:email]' })
  })

  it('writes a replacement with quotes escaped, and a matched number as a string', () => {
    assert.deepEqual(parsedAfter([{ detector: 'credit_card', replacement: 'a "card"' }], { card: 4111111111111111, text: 'pay 4111111111111111' }), { card: 'a "card"', text: 'pay a "card"' })
  })

  it('masks value by value when a custom pattern would cut through the document', () => {
    const rules = [{ detector: 'regex' as const, pattern: 'secret[^,]*' }]
    assert.deepEqual(parsedAfter(rules, { a: 'secret one', b: 'two' }), { a: '[REDACTED:regex]', b: 'two' })
    // A pattern that keeps the syntax is applied to the text as it is.
    assert.equal(maskerOf([{ detector: 'regex', pattern: 'secret' }]).maskText('{ "a": "secret" }'), '{ "a": "[REDACTED:regex]" }')
  })
})

describe('compiling rules', () => {
  const refusal = (rules: Parameters<typeof compileRules>[0]) => {
    try {
      compileRules(rules, 'body/rules')
    } catch (error) {
      assert.ok(error instanceof MaskingRuleError)
      return error.message
    }
    assert.fail('compiled')
  }

  it('refuses patterns RE2 cannot run in linear time, naming the rule', () => {
    assert.match(refusal([{ detector: 'email' }, { detector: 'regex', pattern: '(a)\\1' }]), /^body\/rules\/1\/pattern: .*invalid escape sequence/)
    assert.match(refusal([{ detector: 'regex', pattern: 'x(?=y)' }]), /^body\/rules\/0\/pattern: .*Perl syntax/)
    assert.match(refusal([{ detector: 'regex', pattern: '[a-' }]), /^body\/rules\/0\/pattern: .*missing closing \]/)
    assert.equal(refusal([{ detector: 'regex', pattern: 'a*' }]), 'body/rules/0/pattern: matches the empty string')
  })

  it('wants a pattern with regex and none elsewhere', () => {
    assert.equal(refusal([{ detector: 'regex' }]), 'body/rules/0/pattern: required with the regex detector')
    assert.equal(refusal([{ detector: 'email', pattern: 'x' }]), 'body/rules/0/pattern: only the regex detector takes a pattern, not email')
  })
})
