import { Metadata } from '@grpc/grpc-js'
import { OTLPTraceExporter as OtlpGrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { OTLPTraceExporter as OtlpHttpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'

/** OTLP/HTTP with a JSON or protobuf body, or OTLP/gRPC. */
export type OtlpEncoding = 'json' | 'protobuf' | 'grpc'

/**
 * A tracer provider exporting through the real OpenTelemetry OTLP exporter (HTTP with JSON or
 * protobuf, or gRPC) to `url`, exactly as an application would configure it. Not registered
 * globally, so several can live in one test process.
 */
export function otlpTracerProvider(options: { url: string; apiKey: string; encoding: OtlpEncoding; serviceName: string }): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': '1.2.3' }),
    spanProcessors: [new SimpleSpanProcessor(otlpExporter(options))],
  })
}

function otlpExporter({ url, apiKey, encoding }: { url: string; apiKey: string; encoding: OtlpEncoding }): SpanExporter {
  if (encoding === 'grpc') {
    const metadata = new Metadata()
    metadata.set('x-api-key', apiKey)
    return new OtlpGrpcExporter({ url, metadata })
  }
  const exporterOptions = { url, headers: { 'x-api-key': apiKey } }
  return encoding === 'json' ? new OtlpHttpJsonExporter(exporterOptions) : new OtlpProtoExporter(exporterOptions)
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
