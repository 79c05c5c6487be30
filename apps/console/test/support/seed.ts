import { ROOT_CONTEXT, SpanStatusCode, type Attributes, type Context, type Tracer, trace as traceApi } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'

/**
 * Sends spans as an application would: the OpenTelemetry SDK with its OTLP/HTTP protobuf exporter,
 * pointed at the console's server with a project key. One provider per service name.
 */
export async function sendTraces(baseUrl: string, projectKey: string, serviceName: string, build: (tracer: Tracer) => void): Promise<void> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.version': '1.4.2' }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${baseUrl}/v1/traces`, headers: { 'x-api-key': projectKey } }), {
        maxExportBatchSize: 1000,
        maxQueueSize: 20_000,
        scheduledDelayMillis: 50,
      }),
    ],
  })
  build(provider.getTracer('console-test', '1.0.0'))
  await provider.forceFlush()
  await provider.shutdown()
}

/** A span with explicit times (ms since the epoch), as a child of `parent` when given. */
export function timedSpan(tracer: Tracer, name: string, startMs: number, endMs: number, options: { parent?: Context; attributes?: Attributes; kind?: number; error?: string } = {}) {
  const span = tracer.startSpan(name, { startTime: startMs, attributes: options.attributes ?? {}, ...(options.kind === undefined ? {} : { kind: options.kind }) }, options.parent)
  if (options.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: options.error })
  return {
    span,
    context: traceApi.setSpan(options.parent ?? ROOT_CONTEXT, span),
    end: () => span.end(endMs),
  }
}
