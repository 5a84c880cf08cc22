/**
 * The General questions of the FAQs and Help page. The first five are the setup page's questions (spec §2 Setup);
 * the setup page and the dashboard sidebar render the same set through <FaqList />.
 */
export interface Faq {
  id: string;
  question: string;
  /** Paragraphs of the answer. */
  answer: readonly string[];
  /** An internal page the answer points to. */
  link?: { to: string; label: string };
}

export const GENERAL_FAQS: readonly Faq[] = [
  {
    id: 'what-is-a-cloud-machine',
    question: 'What is a Cloud Machine?',
    answer: [
      'A Cloud Machine is a high-end computer in a data centre, set up with Unreal Engine and a dedicated GPU: an Nvidia T4 with 16 GB of video memory, 4 CPU cores and 16 GB of RAM.',
      'You use it from a Chrome tab. The desktop is streamed to your screen and your mouse and keyboard control it, just like a workstation on your desk, without buying or maintaining one.',
    ],
  },
  {
    id: 'how-does-it-work',
    question: 'How does it work?',
    answer: [
      'Choose your country and the development platform, pick a pack of runtime hours and pay. Your machine is ready within 5 minutes of payment.',
      'On your dashboard, press Start Machine. Starting takes about 3 to 5 minutes; once the machine is online, press Connect and the desktop opens in a new Chrome tab. Hours are counted by the minute, only while the machine is running.',
    ],
  },
  {
    id: 'do-unused-hours-expire',
    question: 'Do unused hours expire?',
    answer: [
      'Yes. Hours are sold as monthly packs: the hours of a purchase can be used for one month from the day you buy them. Hours left at the end of that month expire and do not carry forward.',
      'If you hold hours from several purchases, the hours that expire first are always used first, so nothing runs out while newer hours wait.',
    ],
  },
  {
    id: 'can-i-add-more-hours',
    question: 'Can I add more hours later?',
    answer: [
      'Yes, you can top up anytime. Buy another pack for the same country and platform from Set up and its hours are added to your machine straight away. Each pack keeps its own one-month validity.',
    ],
  },
  {
    id: 'do-my-computer-specs-matter',
    question: "Do my computer's specifications matter?",
    answer: [
      'No. All the heavy work (compiling shaders, building lighting, rendering) happens on the Cloud Machine, so an older laptop or a Chromebook works as well as a gaming PC.',
      'What you need is the Chrome browser and a stable internet connection of about 2 mbps.',
    ],
  },
  {
    id: 'what-happens-when-hours-run-out',
    question: 'What happens when my hours run out?',
    answer: [
      'When your balance reaches zero the machine is stopped and your dashboard tells you why. Your files stay on the machine.',
      'Top up with a new pack and you can start the machine again right away.',
    ],
  },
  {
    id: 'idle-stop',
    question: 'Will my machine keep running if I forget to stop it?',
    answer: [
      'No. To protect your hours, a machine that has not been used for 20 minutes is stopped automatically. You get a warning 5 minutes before it stops; moving the mouse or pressing a key in the machine tab keeps it running.',
      'You can also stop the machine yourself from the dashboard whenever you take a break.',
    ],
  },
  {
    id: 'supported-countries',
    question: 'Which countries do you support?',
    answer: [
      'Germany, India, Spain and the United Kingdom. You choose your country when you set up a machine; prices are shown in your local currency (euro, Indian rupee or pound sterling).',
    ],
  },
  {
    id: 'which-browser',
    question: 'Which browser do I need?',
    answer: [
      'Google Chrome, on Windows, macOS, Linux or ChromeOS. Please keep it up to date. Other browsers are not supported for connecting to a machine.',
    ],
  },
  {
    id: 'are-my-files-kept',
    question: 'Are my files kept between sessions?',
    answer: [
      'Yes. Stopping a machine keeps its home folder, so your projects are waiting for you the next time you start it. We still recommend keeping a copy of important work in your own version control or storage.',
    ],
  },
  {
    id: 'machines-for-a-class',
    question: 'Can I set up machines for a class or a team?',
    answer: [
      'Yes. With a business account an instructor sets up a course for 1 to 40 concurrent students with a start and end date, starts and stops all machines at once and uploads the students’ e-mail list. Students connect with their own accounts, no setup on their side.',
      'Ask us for a business account through the Contact Us form.',
    ],
  },
  {
    id: 'how-do-i-pay',
    question: 'How do I pay?',
    answer: [
      'By card, on our payment provider’s secure checkout page. We never see or store your card number. The amount on the Pay button is the amount charged.',
    ],
  },
  {
    id: 'refunds',
    question: 'Can I get a refund?',
    answer: ['A pack whose hours you have not used can be refunded in full within 14 days of purchase.'],
    link: { to: '/refund-policy', label: 'Read the Refund Policy' },
  },
];

/** The setup page's questions (spec §2 Setup): the first five of the general set. */
export const SETUP_FAQS: readonly Faq[] = GENERAL_FAQS.slice(0, 5);
