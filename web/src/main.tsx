import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { earlyAnswer } from './early/gate';
import './styles/base.css';

/** How long the app's start waits at most for the Connect tab's early answer (early/gate.ts). */
const EARLY_ANSWER_CAP_MS = 250;

performance.mark('hyperdesk:app-script');
void earlyAnswer(EARLY_ANSWER_CAP_MS).then(() => {
  performance.mark('hyperdesk:app-render');
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
});
