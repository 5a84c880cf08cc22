import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { CONTACT_FIELD_MAX } from '@hyperdesk/contract';
import { useAuth } from '../auth/AuthProvider';
import { ApiError } from '../api/http';
import { sendContact, type ContactSource } from '../api/contact';
import { Captcha } from './Captcha';
import { Dialog } from './Dialog';
import { Spinner } from './Spinner';
import styles from './ContactDialog.module.css';

export interface ContactDialogProps {
  open: boolean;
  onOpenChange(open: boolean): void;
  /** 'support' for the FAQ page's Contact Support popup; 'contact' (Contact Us) everywhere else. */
  source?: ContactSource;
}

const REQUIRED = 'This field is required';
const CAPTCHA_REQUIRED = 'captcha verification is required';
const NETWORK_FAILURE = 'There was an error while submitting your form';

const COPY: Record<ContactSource, { title: string; description: string }> = {
  contact: {
    title: 'Contact Us',
    description: 'Questions about cloud machines, pricing or courses? Send us a message and we will reply by e-mail.',
  },
  support: {
    title: 'Contact Support',
    description: 'Tell us what is going on with your Cloud Machine and our support team will help you sort it out.',
  },
};

/** The Contact Us and Contact Support popups (spec §5, §7, §8). */
export function ContactDialog({ open, onOpenChange, source = 'contact' }: ContactDialogProps) {
  const copy = COPY[source];
  useReturnFocus(open);
  return (
    <Dialog open={open} onOpenChange={onOpenChange} title={copy.title} description={copy.description}>
      {/* Mounted only while open, so every opening starts with an empty form. */}
      <ContactForm source={source} onDone={() => onOpenChange(false)} />
    </Dialog>
  );
}

/**
 * Gives focus back to the button that opened the popup when it closes or unmounts: the popups are opened from
 * plain buttons (no Radix trigger), so Radix has no element to return focus to.
 */
function useReturnFocus(open: boolean) {
  const active = () => (document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null);
  const [opener, setOpener] = useState<HTMLElement | null>(() => (open ? active() : null));
  const [wasOpen, setWasOpen] = useState(open);
  if (open !== wasOpen) {
    setWasOpen(open);
    if (open) setOpener(active());
  }
  useEffect(() => {
    if (!open || !opener) return;
    // Runs when the popup closes (open turns false) or is unmounted by its owner.
    return () => {
      setTimeout(() => {
        if (opener.isConnected) opener.focus();
      }, 0);
    };
  }, [open, opener]);
}

type Field = 'name' | 'email' | 'query';

function ContactForm({ source, onDone }: { source: ContactSource; onDone(): void }) {
  const { user } = useAuth();
  const id = useId();
  const [values, setValues] = useState<Record<Field, string>>({ name: '', email: '', query: '' });
  const [errors, setErrors] = useState<Partial<Record<Field | 'captcha', string>>>({});
  const [captcha, setCaptcha] = useState<string | null>(null);
  const [captchaKey, setCaptchaKey] = useState(0);
  const refs = { name: useRef<HTMLInputElement>(null), email: useRef<HTMLInputElement>(null), query: useRef<HTMLTextAreaElement>(null) };

  const send = useMutation({
    mutationFn: sendContact,
    onSettled: (answer) => {
      // Each captcha solution is accepted once: ask for a fresh one unless the message went through.
      if (!answer?.success) {
        setCaptcha(null);
        setCaptchaKey((k) => k + 1);
      }
    },
  });

  // Signed-in users are not asked for their name and e-mail (spec §5): the account's are sent.
  const name = user ? user.displayName || values.name : values.name;
  const email = user ? user.email : values.email;

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (send.isPending) return;
    const next: typeof errors = {};
    if (!name.trim()) next.name = REQUIRED;
    if (!email.trim()) next.email = REQUIRED;
    if (!values.query.trim()) next.query = REQUIRED;
    if (!captcha) next.captcha = CAPTCHA_REQUIRED;
    setErrors(next);
    const first = (['name', 'email', 'query'] as const).find((f) => next[f]);
    if (first) {
      refs[first].current?.focus();
      return;
    }
    if (next.captcha || !captcha) return;
    send.mutate({ name: name.trim(), email: email.trim(), query: values.query, captcha, source });
  };

  const change = (field: Field) => (e: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [field]: e.target.value }));
    if (errors[field]) setErrors((er) => ({ ...er, [field]: undefined }));
  };

  if (send.data?.success) {
    return (
      <div className={styles.done}>
        <p className={styles.success} role="status">
          Thanks! We'll get in touch with you on {send.variables?.email ?? email} soon.
        </p>
        <button type="button" className={styles.submit} onClick={onDone} autoFocus>
          Close
        </button>
      </div>
    );
  }

  const failure = send.data && !send.data.success ? send.data.message : send.error ? failureText(send.error) : null;
  const fieldProps = (field: Field) => ({
    id: `${id}-${field}`,
    name: field === 'query' ? 'Query' : field,
    value: values[field],
    onChange: change(field),
    'aria-invalid': errors[field] ? true : undefined,
    'aria-describedby': errors[field] ? `${id}-${field}-error` : undefined,
    className: styles.input,
  });
  const errorOf = (field: Field | 'captcha') =>
    errors[field] ? (
      <p id={`${id}-${field}-error`} className={styles.error} role={field === 'captcha' ? 'alert' : undefined}>
        {errors[field]}
      </p>
    ) : null;

  return (
    <form className={styles.form} onSubmit={onSubmit} noValidate>
      {user ? <p className={styles.signedIn}>We will reply to {user.email}.</p> : null}
      {/* Signed-in users are asked for a name only if their account has none. */}
      {!user || !user.displayName ? (
        <div className={styles.field}>
          <label htmlFor={`${id}-name`}>Name</label>
          <input ref={refs.name} type="text" autoComplete="name" maxLength={CONTACT_FIELD_MAX.name} {...fieldProps('name')} />
          {errorOf('name')}
        </div>
      ) : null}
      {!user ? (
        <div className={styles.field}>
          <label htmlFor={`${id}-email`}>Email</label>
          <input ref={refs.email} type="email" autoComplete="email" maxLength={CONTACT_FIELD_MAX.email} {...fieldProps('email')} />
          {errorOf('email')}
        </div>
      ) : null}
      <div className={styles.field}>
        <label htmlFor={`${id}-query`}>Query</label>
        <textarea ref={refs.query} rows={5} maxLength={CONTACT_FIELD_MAX.Query} {...fieldProps('query')} />
        {errorOf('query')}
      </div>
      <div className={styles.field}>
        <Captcha
          key={captchaKey}
          onChange={(payload) => {
            setCaptcha(payload);
            if (payload) setErrors((er) => ({ ...er, captcha: undefined }));
          }}
        />
        {errorOf('captcha')}
      </div>
      {failure ? (
        <p className={styles.failure} role="alert">
          {failure}
        </p>
      ) : null}
      <button type="submit" className={styles.submit} disabled={send.isPending}>
        {send.isPending ? <Spinner small label="Submitting" /> : null}
        <span>{send.isPending ? 'Submitting…' : 'Submit'}</span>
      </button>
    </form>
  );
}

/** A refusal from the server shows its message; anything else (offline, 5xx, bad answer) the spec's generic text. */
function failureText(err: unknown): string {
  if (err instanceof ApiError && err.status < 500 && err.message) return err.message;
  return NETWORK_FAILURE;
}

export default ContactDialog;
