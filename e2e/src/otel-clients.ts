import { OTLPTraceExporter as OtlpHttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'

export type OtlpEncoding = 'json' | 'protobuf'

/**
 * A tracer provider exporting through the real OpenTelemetry OTLP/HTTP exporter (JSON or
 * protobuf) to `url`, exactly as an application would configure it. Not registered globally,
 * so several can live in one test process.
 */
export function otlpTracerProvider(options: { url: string; apiKey: string; encoding: OtlpEncoding; serviceName: string }): BasicTracerProvider {
  const exporterOptions = { url: options.url, headers: { 'x-api-key': options.apiKey } }
  const exporter: SpanExporter = options.encoding === 'json' ? new OtlpHttpJsonExporter(exporterOptions) : new OtlpProtoExporter(exporterOptions)
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': '1.2.3' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
}

/** The attributes of an LLM chat call, as the Langtrace instrumentations set them. */
export function chatAttributes(model: string): Record<string, string | number> {
  return {
    'llm.vendor': 'openai',
    'llm.request.model': model,
    'llm.request.type': 'chat_completion',
    'llm.request.messages': JSON.stringify([{ role: 'user', content: 'Quote "exactly" & keep \\ escapes, ünïcødé ✓' }]),
    'llm.response.choices': JSON.stringify([{ role: 'assistant', content: 'Done.' }]),
    'gen_ai.usage.input_tokens': 21,
    'gen_ai.usage.output_tokens': 3,
  }
}
