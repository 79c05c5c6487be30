import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * A worker thread's module: its bundle (`bundle`, built beside the service's by `npm run
 * build:services`) when the service runs from its own bundle, as in the image; otherwise the
 * TypeScript source (`source`), which Node runs as is. The bundles' entry points are .mjs files
 * (docker/services.rolldown.config.mjs), the sources' .ts.
 */
export function workerModuleFile(bundle: URL, source: URL): string {
  const bundled = fileURLToPath(bundle)
  return process.argv[1]?.endsWith('.mjs') === true && existsSync(bundled) ? bundled : fileURLToPath(source)
}
