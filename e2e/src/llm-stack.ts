import { context, type Attributes } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base'
import { startAllInOne, type AllInOne } from './all-in-one.ts'
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.server.ts'
import { judgeSettings } from './judge-expectations.ts'
import { otlpTracerProvider } from './otel-clients.ts'

/**
 * What an instrumentation test runs against: `npm start` on a database of its own, the local
 * OpenAI-compatible server, and an application's tracer provider exporting OTLP/protobuf to the
 * former (context propagated through async calls, as an instrumented application has it).
 */
export interface LlmStack {
  stack: AllInOne
  fake: FakeOpenAi
  provider: BasicTracerProvider
  /** Runs `call` inside the application's own span (`answer question`); resolves with its trace id once exported. */
  turn(call: () => Promise<unknown>, attributes?: Attributes): Promise<string>
  stop(): Promise<void>
}

export async function startLlmStack(): Promise<LlmStack> {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  // The fake model (the application's and the judges') listens on loopback, which the outbound policy refuses unless allowed.
  const [stack, fake] = await Promise.all([startAllInOne(judgeSettings), startFakeOpenAi()])
  const provider = otlpTracerProvider({ url: `${stack.service.url}/v1/traces`, apiKey: stack.projectKey, encoding: 'protobuf', serviceName: 'support-bot' })
  const tracer = provider.getTracer('support-bot')
  return {
    stack,
    fake,
    provider,
    async turn(call, attributes = {}) {
      const traceId = await tracer.startActiveSpan('answer question', { attributes }, async (span) => {
        await call()
        span.end()
        return span.spanContext().traceId
      })
      await provider.forceFlush()
      return traceId
    },
    async stop() {
      await provider.shutdown()
      await Promise.all([stack.stop(), fake.close()])
    },
  }
}
