/** Texts of the terms, privacy, refund and about pages (footer links). */
export type LegalPage = 'terms' | 'privacy' | 'refund' | 'about';

export interface LegalSection {
  heading: string;
  paragraphs: string[];
  list?: string[];
}

export interface LegalContent {
  title: string;
  metaTitle: string;
  description: string;
  intro: string;
  updated?: string;
  sections: LegalSection[];
}

const UPDATED = '1 November 2026';
const CONTACT_NOTE = 'You can reach us at any time through the Contact Us form at the top of every page.';

export const LEGAL: Record<LegalPage, LegalContent> = {
  terms: {
    title: 'Terms of Service',
    metaTitle: 'Terms of Service · Hyperdesk',
    description: 'The terms for using Hyperdesk cloud machines: accounts, monthly hour packs, expiry, acceptable use, availability and liability.',
    intro: 'These terms apply when you create a Hyperdesk account, buy runtime hours or use a Hyperdesk cloud machine. Please read them together with our Privacy Policy and Refund Policy.',
    updated: UPDATED,
    sections: [
      {
        heading: 'The service',
        paragraphs: [
          'Hyperdesk rents virtual machines with a dedicated GPU and Unreal Engine installed (“cloud machines”). You use a cloud machine remotely from the Google Chrome browser; a stable connection of about 2 mbps is required. Which software you install and run on your machine beyond the preinstalled platform is up to you, within these terms and the licences of that software.',
          'Unreal Engine is licensed to you by Epic Games under the Unreal Engine End User License Agreement. Hyperdesk is not affiliated with Epic Games.',
        ],
      },
      {
        heading: 'Your account',
        paragraphs: [
          'You need an account with a valid e-mail address. Keep your password to yourself; you are responsible for what happens under your account. Tell us straight away if you think someone else has used it.',
          'Instructors with a business account are responsible for the student e-mail list they upload and for having their students’ agreement to use the service.',
        ],
      },
      {
        heading: 'Hours, expiry and top-ups',
        paragraphs: ['Runtime is sold as monthly packs of hours, at the price shown for your country before you pay.'],
        list: [
          'Hours of a purchase can be used for one month from the date of purchase. Unused hours then expire and do not carry forward.',
          'You can top up at any time; each pack keeps its own validity, and the hours that expire first are used first.',
          'Hours are counted per minute while your machine is running, from the moment it is online until it is stopped.',
          'When your hours run out, or the machine has not been used for 20 minutes, it is stopped automatically. We warn you 5 minutes before an idle stop.',
          'Course packs are valid between the course start and end dates you chose; machines can be started from the start date.',
        ],
      },
      {
        heading: 'Availability',
        paragraphs: [
          'We aim to have a newly bought machine ready within 5 minutes of payment, and a stopped machine usually starts in 3 to 5 minutes. We work hard to keep the service available but cannot promise that it will be uninterrupted; planned maintenance is announced in advance where possible.',
          'If a machine you paid for cannot be delivered, the Refund Policy applies.',
        ],
      },
      {
        heading: 'Your files',
        paragraphs: [
          'The home folder of your machine is kept when the machine stops and for as long as your machine exists. A cloud machine is not a backup service: keep copies of work that matters in your own version control or storage.',
          'When your account is closed, or 90 days after the last of your hours expired, we may delete the machine and its files.',
        ],
      },
      {
        heading: 'Acceptable use',
        paragraphs: ['You must not use a cloud machine to:'],
        list: [
          'break the law or infringe anyone’s rights, including software licences and copyright;',
          'mine cryptocurrency, send spam or run services for third parties;',
          'attack, scan or overload other systems, or try to get around the limits of the service;',
          'share your account or a student seat with people it was not bought for.',
        ],
      },
      {
        heading: 'Suspension and ending',
        paragraphs: [
          'You can stop using Hyperdesk and ask us to close your account at any time. We may suspend a machine or an account that breaks these terms; where possible we will tell you first and give you a chance to put things right.',
        ],
      },
      {
        heading: 'Liability',
        paragraphs: [
          'Nothing in these terms limits rights you have by law as a consumer. Apart from that, our total liability for any claim is limited to the amount you paid us in the twelve months before the claim, and we are not liable for indirect losses such as lost profits or lost data that a backup would have preserved.',
        ],
      },
      {
        heading: 'Changes and contact',
        paragraphs: [
          'We may update these terms. For changes that affect you we will e-mail you at least 30 days in advance; hours you already bought keep the terms they were bought under.',
          CONTACT_NOTE,
        ],
      },
    ],
  },
  privacy: {
    title: 'Privacy Policy',
    metaTitle: 'Privacy Policy · Hyperdesk',
    description: 'What personal data Hyperdesk collects, why, how long it is kept, who it is shared with and how to exercise your rights.',
    intro: 'We collect as little personal data as we can to run the service, we never sell it, and we do not use advertising trackers. This policy explains what we keep and why.',
    updated: UPDATED,
    sections: [
      {
        heading: 'What we collect',
        paragraphs: ['Depending on how you use Hyperdesk we process:'],
        list: [
          'Account data: your name, e-mail address and a hash of your password (never the password itself).',
          'Orders: the packs you bought, their country, price and payment status. Card details are entered on our payment provider’s checkout page; we never see or store your card number.',
          'Usage: when your machines start and stop and how many minutes they run, to count your hours.',
          'Course data: for instructors, the course details and the student e-mail list you upload.',
          'Messages: what you send us through the Contact Us and Contact Support forms.',
          'Technical data: IP addresses and request logs, kept briefly to protect the service against abuse.',
        ],
      },
      {
        heading: 'Why we use it',
        paragraphs: [
          'To provide the service you bought (performing our contract with you), to answer your messages, to keep the service secure, and to meet our legal obligations such as keeping invoices. We send you e-mails about your account and your machines; we do not send marketing e-mails unless you ask for them.',
        ],
      },
      {
        heading: 'Cookies and captcha',
        paragraphs: [
          'We use one cookie, which keeps you signed in. There are no analytics or advertising cookies. Our forms are protected by a proof-of-work captcha that runs in your browser and is served by us, so no third-party captcha service sees your visit.',
        ],
      },
      {
        heading: 'Your machine’s contents',
        paragraphs: [
          'Files on your cloud machine are yours. We do not look at them, except where needed to keep the service running or when the law requires it.',
        ],
      },
      {
        heading: 'Who we share it with',
        paragraphs: ['Only with the providers that help us run Hyperdesk, each bound to protect your data:'],
        list: [
          'our card payment provider, for checkout and payment records;',
          'the data centres that host the cloud machines and our servers;',
          'our e-mail delivery provider, for account and service e-mails.',
        ],
      },
      {
        heading: 'How long we keep it',
        paragraphs: [
          'Account data is kept while your account is open. Orders and invoices are kept for as long as tax law requires. Messages to support are kept for two years. Request logs are deleted after 30 days.',
        ],
      },
      {
        heading: 'Your rights',
        paragraphs: [
          'You can ask for a copy of your data, have it corrected or deleted, object to how we use it or ask us to restrict it, and take it elsewhere. If you live in the EU or the United Kingdom you can also complain to your data protection authority; in India, to the Data Protection Board. We answer requests within 30 days.',
          CONTACT_NOTE,
        ],
      },
    ],
  },
  refund: {
    title: 'Refund Policy',
    metaTitle: 'Refund Policy · Hyperdesk',
    description: 'When Hyperdesk refunds hour packs: unused packs within 14 days, machines we could not deliver, and how to ask for a refund.',
    intro: 'We want you to pay only for hours that were useful to you. This policy explains when we refund a purchase and how to ask.',
    updated: UPDATED,
    sections: [
      {
        heading: 'Unused packs',
        paragraphs: [
          'A pack whose hours you have not started using can be refunded in full within 14 days of purchase. Once some of its hours have been used, the pack is no longer refundable, and hours that have expired cannot be refunded.',
        ],
      },
      {
        heading: 'If something goes wrong on our side',
        paragraphs: [
          'If your machine is not ready within the promised time and we cannot fix it promptly, or an outage on our side stops you from using hours you bought, we refund the affected purchase in full or add the lost hours back, whichever you prefer.',
        ],
      },
      {
        heading: 'Course packs',
        paragraphs: [
          'A course pack can be refunded in full up to the day before the course start date. After the course has started, unused hours are not refundable, but if students could not connect because of a problem on our side we refund the affected hours.',
        ],
      },
      {
        heading: 'How to ask for a refund',
        paragraphs: [
          'Send us a message through the Contact Us form from the e-mail address of your account, with the date and the amount of the purchase.',
          'Approved refunds go back to the card you paid with. Depending on your bank they appear within 5 to 10 working days. The hours of a refunded pack are removed from your machine.',
        ],
      },
      {
        heading: 'Your legal rights',
        paragraphs: [
          'This policy does not limit the rights you have under consumer law in your country.',
        ],
      },
    ],
  },
  about: {
    title: 'About Hyperdesk',
    metaTitle: 'About Hyperdesk',
    description: 'Hyperdesk makes high-end Unreal Engine workstations available to anyone with Chrome and a 2 mbps connection, by the hour.',
    intro: 'Hyperdesk exists so that the price of a graphics card never decides who gets to learn and build with real-time 3D.',
    sections: [
      {
        heading: 'Why we built it',
        paragraphs: [
          'Unreal Engine is free to download, but the computer to run it well is not: upgrading one costs $2,500 on average. For students, teachers and independent creators that is often the end of the road before the first project begins.',
          'Hyperdesk puts a GPU workstation in a data centre and streams it to your browser. You pay roughly 4% of that upgrade, about $100, for the hours you actually use, and work from the computer you already own.',
        ],
      },
      {
        heading: 'What we offer',
        paragraphs: [
          'HyperRender gives individuals their own Unreal Engine cloud machine. SwiftShader gives instructors one machine per student, for classes of up to 40 concurrent students, started and stopped with one click. Both run in Google Chrome over a stable 2 mbps connection and are ready within 5 minutes of payment.',
        ],
      },
      {
        heading: 'Where we are',
        paragraphs: [
          'We serve customers in Germany, India, Spain and the United Kingdom, with prices in local currency.',
        ],
      },
      {
        heading: 'Talk to us',
        paragraphs: [
          'Questions, ideas for your class or a problem with your machine? Our FAQs and Help page answers the most common questions, and a person reads every message sent through Contact Us.',
        ],
      },
    ],
  },
};
