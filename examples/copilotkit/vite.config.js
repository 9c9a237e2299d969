import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// base './' so the built page works from any path (server.mjs serves it at /).
// `npm run dev` proxies /api to the runtime (node server.mjs, default
// 127.0.0.1:4000; RUNTIME_ORIGIN to change it).
export default defineConfig({
  plugins: [react()],
  base: './',
  server: {
    proxy: { '/api': process.env.RUNTIME_ORIGIN || 'http://127.0.0.1:4000' },
  },
  // CopilotKit's React package brings its chat UI, markdown rendering and
  // schema validation: a few MB minified, which is what it is for this example.
  build: { chunkSizeWarningLimit: 6000 },
});
