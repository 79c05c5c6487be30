export { PROBES, TextFilterWords, textFilterProbes } from './text-filter.ts'
export { BlockFilter, blockFilterBits, textBlockOf, TEXT_BLOCK_MS } from './block-filter.ts'
