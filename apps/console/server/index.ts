import { fileURLToPath } from 'node:url'

/**
 * Where `vite build` writes the console (index.html and assets/), for the control plane to serve.
 * This is the package's only Node export: the browser code under src/ is bundled, never imported.
 */
export const consoleDistDir = fileURLToPath(new URL('../dist/', import.meta.url))
