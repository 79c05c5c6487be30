export { PROBES, TextFilterWords, textFilterProbes, unionTextFilterHex } from './text-filter.ts'
export { BlockFilter, blockFilterBits, textBlockOf, TEXT_BLOCK_MS } from './block-filter.ts'
