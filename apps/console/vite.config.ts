import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'
import { compression, defineAlgorithm } from 'vite-plugin-compression2'

// The control plane serves dist/ (index.html, and assets/ named by content hash); see
// apps/control-plane/src/console/console-assets.plugin.ts. `npm run dev` proxies the API to a
// local `npm start`.
export default defineConfig({
  plugins: [
    react(),
    // gzip and brotli copies beside each asset, served as they are to clients that accept them.
    compression({ algorithms: [defineAlgorithm('gzip', { level: 9 }), defineAlgorithm('brotliCompress')], include: /\.(js|css|svg)$/, threshold: 1024 }),
  ],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // Everything the page needs lives under assets/, so nothing but index.html is served uncached.
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': 'http://localhost:3000', '/v1': 'http://localhost:3000' },
  },
})
