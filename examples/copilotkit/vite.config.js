import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// base './' so the built page works from any path, e.g. a plain static
// server or a sub-folder of one.
export default defineConfig({
  plugins: [react()],
  base: './',
  // @ag-ui/client brings its schema validation (zod) and protobuf codec:
  // about 500 kB minified, which is what it is for this example.
  build: { chunkSizeWarningLimit: 800 },
});
