-- Contact messages are answered by replying to the visitor, not to MAIL_FROM.
alter table mail_outbox add column reply_to text;
