import tailwindcss from '@tailwindcss/vite';
import react from '@vitejs/plugin-react';
import { defineConfig, type ProxyOptions } from 'vite';

// `npm run dev` serves the app and forwards the service's own paths to a running `fss serve`.
const target = process.env.FSS_DEV_API ?? 'http://127.0.0.1:8080';
// The Host header is kept (no changeOrigin): links the service builds from it (share pages,
// download URLs) then point at this dev server, which forwards them too.
const service: ProxyOptions = { target };

export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: {
    outDir: 'dist/web',
    emptyOutDir: true,
  },
  server: {
    // Keys starting with ^ are regular expressions. Each matches its path exactly or below it,
    // so client routes such as /login, /folder/12, /search, /recent, /bin and /s/:code stay with the app.
    proxy: {
      '^/(OAuth|File|User|Share)Service\\.asmx(?:[/?]|$)': service,
      '^/upload(?:[/?]|$)': service,
      '^/d/': service,
      '^/l/': service,
      '^/files/': service,
      // A share's cover image; the share page itself (/s/:code) stays with the app.
      '^/s/image/': service,
    },
  },
});
