import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
// Before the first render: the chosen theme and the language on <html>.
import './lib/theme';
import './i18n';
import './index.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
