// Where the typescript-sources hook keeps each module's stripped text, by a hash of the source and
// of the Node that stripped it. A module of its own, so that the benchmarks can empty it without
// importing the hook (importing the hook is what installs it). Delete it at will.
import { URL } from 'node:url'

export const strippedSourcesDirectory = new URL('../../node_modules/.cache/stripped-typescript/', import.meta.url)
