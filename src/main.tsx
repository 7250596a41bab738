import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { queryClient } from './api/query-client';
import { getLanguage } from './i18n';
import { formatSize } from './lib/format';
// Before the first render: the chosen theme and the language on <html>.
import './lib/theme';
import './i18n';
import './index.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// The router's loaders have asked for the folder's listing (App.tsx); waiting briefly for its first items
// lets the page render once, with the list, rather than a skeleton and then the list.
const FIRST_DATA_WAIT_MS = 150;
// The page's first number format starts ICU (20 ms and more, once per page): made while the page idles waiting for
// those calls, not in the first render, which shows sizes. Where there is no idle callback, the render makes it.
if ('requestIdleCallback' in window) requestIdleCallback(() => formatSize(0, getLanguage()));
const waiting = () => queryClient.getQueryCache().getAll().some((query) => query.state.status === 'pending' && query.state.fetchStatus === 'fetching');
void new Promise<void>((resolve) => {
  const stop = queryClient.getQueryCache().subscribe(() => void (waiting() || done()));
  const timer = setTimeout(() => done(), FIRST_DATA_WAIT_MS);
  const done = () => (stop(), clearTimeout(timer), resolve());
  if (!waiting()) done();
}).then(() =>
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  ),
);
