import * as Accordion from '@radix-ui/react-accordion';
import { Link } from 'react-router';
import { GENERAL_FAQS, type Faq } from '../content/faqs';
import styles from './FaqList.module.css';

export interface FaqListProps {
  /** Questions to show; the FAQs page's General set by default (the setup page passes SETUP_FAQS). */
  items?: readonly Faq[];
  /** Tighter spacing for sidebars. */
  compact?: boolean;
}

/** An accordion of questions and answers (keyboard: Tab between questions, Enter/Space to open, arrows to move). */
export function FaqList({ items = GENERAL_FAQS, compact = false }: FaqListProps) {
  return (
    <Accordion.Root type="multiple" className={compact ? `${styles.list} ${styles.compact}` : styles.list}>
      {items.map((f) => (
        <Accordion.Item key={f.id} value={f.id} className={styles.item}>
          <Accordion.Header className={styles.header}>
            <Accordion.Trigger className={styles.trigger}>
              <span>{f.question}</span>
              <svg className={styles.chevron} viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
                <path d="M6 9l6 6 6-6" fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
              </svg>
            </Accordion.Trigger>
          </Accordion.Header>
          <Accordion.Content className={styles.content}>
            <div className={styles.answer}>
              {f.answer.map((p) => (
                <p key={p}>{p}</p>
              ))}
              {f.link ? (
                <p>
                  <Link to={f.link.to}>{f.link.label}</Link>
                </p>
              ) : null}
            </div>
          </Accordion.Content>
        </Accordion.Item>
      ))}
    </Accordion.Root>
  );
}
