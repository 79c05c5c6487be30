export { parseJsonText, type JsonReviver } from './parse-json-text.ts'
export { needsJsonEscape } from './needs-json-escape.ts'
export { JsonScanner, scanJson, type JsonScanLimits, type JsonScanResult } from './json-scanner.ts'
export { JsonTextBytes } from './json-text-bytes.ts'
