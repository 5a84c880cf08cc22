import { FaqList } from '../../components/FaqList';
import { SETUP_FAQS } from '../../content/faqs';
import styles from './Setup.module.css';

/** The setup page's questions (spec §2); also the dashboard's FAQ sidebar. */
export function SetupFaq({ compact = false }: { compact?: boolean }) {
  return (
    <section className={styles.faq} aria-labelledby={compact ? 'side-faq-title' : 'setup-faq-title'}>
      <h2 id={compact ? 'side-faq-title' : 'setup-faq-title'} className={styles.faqTitle}>
        Frequently asked questions
      </h2>
      <FaqList items={SETUP_FAQS} compact={compact} />
    </section>
  );
}
