export { parseJsonText } from './parse-json-text.ts'
export { needsJsonEscape } from './needs-json-escape.ts'
