import { lazy, Suspense, useState } from 'react';
import { SiteHeader } from '../../components/SiteHeader';
import { SiteFooter } from '../../components/SiteFooter';
import { FaqList } from '../../components/FaqList';
import { usePageMeta } from '../../content/meta';
import { GENERAL_FAQS } from '../../content/faqs';
import { HELP_EMAIL, HELP_MAILTO } from '../../lib/help';
import styles from './Faqs.module.css';

const loadContact = () => import('../../components/ContactDialog');
const ContactDialog = lazy(() => loadContact().then((m) => ({ default: m.ContactDialog })));

const DESCRIPTION =
  'Answers about Hyperdesk cloud machines: how they work, monthly hours and expiry, top-ups, supported countries, Chrome and the 2 mbps connection, idle stop, and how to contact support.';

/** /faqs: the General questions and the Contact Support popup (spec §2 FAQs and Help). */
export default function Faqs() {
  usePageMeta('FAQs and Help · Hyperdesk', DESCRIPTION);
  const [supportOpen, setSupportOpen] = useState(false);
  return (
    <div className={styles.page}>
      <SiteHeader />
      <main id="main" className={styles.main}>
        <div className={styles.band}>
          <div className={styles.bandInner}>
            <h1 className={styles.title}>FAQs and Help</h1>
            <p className={styles.intro}>Everything you need to know about Cloud Machines, hours and getting connected.</p>
          </div>
        </div>
        <div className={styles.layout}>
          <section aria-labelledby="general-title">
            <h2 id="general-title" className={styles.category}>General</h2>
            <FaqList items={GENERAL_FAQS} />
          </section>
          <aside className={styles.help} aria-labelledby="help-title">
            <h2 id="help-title" className={styles.helpTitle}>Still need help?</h2>
            <p>Can’t find your answer? Our support team reads every message and replies by e-mail.</p>
            <button type="button" className={styles.button} onClick={() => setSupportOpen(true)} onPointerEnter={() => void loadContact()}>
              Contact Support
            </button>
            <p className={styles.mail}>
              Or write to <a href={HELP_MAILTO}>{HELP_EMAIL}</a>
            </p>
          </aside>
        </div>
      </main>
      <SiteFooter />
      {supportOpen ? (
        <Suspense fallback={null}>
          <ContactDialog open onOpenChange={setSupportOpen} source="support" />
        </Suspense>
      ) : null}
    </div>
  );
}
