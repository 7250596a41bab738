import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { queryClient } from './api/query-client';
// Before the first render: the chosen theme and the language on <html>.
import './lib/theme';
import './i18n';
import './index.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

// The router's loaders have asked for the folder's listing (App.tsx); waiting briefly for its first items
// lets the page render once, with the list, rather than a skeleton and then the list.
const FIRST_DATA_WAIT_MS = 150;
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
