export { seededRandom } from './seeded-random.ts'
export { acceptedTraces } from './otlp-json-body.ts'
export { startTcpProxy, type TcpProxy } from './tcp-proxy.ts'
export { denseJson, gzipped, malformedStringsJson } from './hostile-json-bodies.ts'
