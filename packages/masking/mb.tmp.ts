import { decodeTraceBody } from '@tracewell/otlp'
import { maskerOf, maskTraceBody } from '@tracewell/masking'
import { bodyFactory } from '/work/wt/masking-perf/bench/src/llm-spans.ts'

const rules = [{ detector: 'email' }, { detector: 'phone' }, { detector: 'credit_card' }, { detector: 'secret' }, { detector: 'regex', pattern: 'ACCT-[0-9]{8}' }] as any
const masker = maskerOf(rules)
const customer = 'Order for jane.doe@example.com (+1 415 555 2671) #'
const spans = Number(process.env.SPANS ?? 100)
const every = process.env.EVERY === '1'
const next = bodyFactory(spans)
const bodies = Array.from({ length: 50 }, (_, i) => {
  const b = next()
  const s = every ? b.replaceAll('Order #', customer) : spans === 1 ? (i % 10 === 0 ? b.replaceAll('Order #', customer) : b) : b.replace(/Order #(\d+0)\b/g, `${customer}$1`)
  return Buffer.from(s)
})
function time(label: string, fn: (b: Buffer) => void) {
  for (let i = 0; i < 200; i++) fn(bodies[i % bodies.length]!)
  const n = Math.max(400, 40000 / spans)
  const t = process.hrtime.bigint()
  for (let i = 0; i < n; i++) fn(bodies[i % bodies.length]!)
  const us = Number(process.hrtime.bigint() - t) / 1e3 / n / spans
  console.log(label, us.toFixed(2), 'µs/span')
  return us
}
for (let r = 0; r < 3; r++) {
  const d = time('decode', (b) => { decodeTraceBody(b, 'json') })
  const m = time('decode+mask', (b) => { const dec = decodeTraceBody(b, 'json'); maskTraceBody(b, 'json', dec.spans, masker) })
  const s = time('mask spans only', (b) => { const dec = decodeTraceBody(b, 'json'); masker.maskSpans(dec.spans) })
  console.log('mask adds', (m - d).toFixed(2), 'maskSpans', (s - d).toFixed(2), 'patch', (m - s).toFixed(2))
}
