import { useId, useState } from 'react';
import styles from './Connect.module.css';

export interface ClipboardPanelProps {
  /** The machine's clipboard as last received (the panel starts from it; see the key on its parent). */
  remoteText: string;
  onSend(text: string): void;
  onClose(): void;
}

/**
 * Text clipboard both ways: what the machine copies shows up here (and in this computer's clipboard when the browser
 * allows it); what is typed or pasted here goes to the machine's clipboard with Send.
 */
export function ClipboardPanel({ remoteText, onSend, onClose }: ClipboardPanelProps) {
  const [text, setText] = useState(remoteText);
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const [sent, setSent] = useState(false);
  const id = useId();
  const copy = () => {
    navigator.clipboard
      ?.writeText(text)
      .then(() => setCopied('copied'))
      .catch(() => setCopied('failed'));
  };
  return (
    <div className={styles.clipboard} role="region" aria-labelledby={`${id}-title`}>
      <label id={`${id}-title`} htmlFor={`${id}-text`} className={styles.clipboardTitle}>
        Clipboard
      </label>
      <p className={styles.hint}>Paste text here and send it to the machine, then paste it there as usual.</p>
      <textarea
        id={`${id}-text`}
        className={styles.clipboardText}
        value={text}
        maxLength={100_000}
        rows={5}
        onChange={(e) => {
          setText(e.target.value);
          setCopied('idle');
          setSent(false);
        }}
      />
      <div className={styles.buttons}>
        <button type="button" className={styles.primary} disabled={!text} onClick={() => {
            onSend(text);
            setSent(true);
          }}>
          {sent ? 'Sent' : 'Send to machine'}
        </button>
        <button type="button" className={styles.secondary} disabled={!text} onClick={copy}>
          {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy blocked by the browser' : 'Copy here'}
        </button>
        <button type="button" className={styles.linkButton} onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}
