import type { Catalogue } from './en.js';

/**
 * Modern Standard Arabic, addressing the reader in the masculine generic as interfaces commonly do;
 * "تسجيل الدخول" for signing in, "رمز الاسترداد" for recovery codes. Plurals follow CLDR's six
 * Arabic forms (zero, one, two, few, many, other).
 */
export const ar: Catalogue = {
  'layout.languages': 'اللغة',

  'login.title': 'تسجيل الدخول',
  'login.lead': 'للمتابعة إلى <strong>{client}</strong>',
  'login.username': 'اسم المستخدم',
  'login.password': 'كلمة المرور',
  'login.submit': 'تسجيل الدخول',
  'login.forgotPassword': 'هل نسيت كلمة المرور؟',
  'login.withProvider': 'تسجيل الدخول عبر {provider}',
  'login.withPasskey': 'تسجيل الدخول بمفتاح مرور',
  'login.withKerberos': 'تسجيل الدخول بحساب مؤسستك (Kerberos)',
  'login.invalidCredentials': 'اسم المستخدم أو كلمة المرور غير صحيحة.',
  'login.tooManyAttempts':
    'محاولات تسجيل دخول فاشلة كثيرة. يُرجى المحاولة مجددًا بعد {unit, select, seconds {{count, plural, zero {# ثانية} one {ثانية واحدة} two {ثانيتين} few {# ثوانٍ} many {# ثانية} other {# ثانية}}} other {{count, plural, zero {# دقيقة} one {دقيقة واحدة} two {دقيقتين} few {# دقائق} many {# دقيقة} other {# دقيقة}}}}.',
  'login.lastAttempt': 'بقيت محاولة واحدة قبل إيقاف تسجيل الدخول لمدة {minutes} دقيقة.',

  'otp.title': 'التحقق بخطوتين',
  'otp.label': 'الرمز من تطبيق المصادقة',
  'otp.submit': 'تحقّق',
  'otp.usePasskey': 'استخدام مفتاح مرور بدلًا من ذلك',
  'otp.useRecoveryCode': 'استخدام رمز استرداد بدلًا من ذلك',
  'otp.invalidCode': 'هذا الرمز غير صالح. أدخل الرمز الحالي من تطبيقك.',

  'recovery.title': 'استخدام رمز استرداد',
  'recovery.label': 'رمز الاسترداد',
  'recovery.format':
    'عشرة أحرف وأرقام من القائمة التي حفظتها، مثل ABCDE-23456 (لا تهم الشرطة ولا حالة الأحرف).',
  'recovery.submit': 'تحقّق',
  'recovery.useApp': 'استخدام الرمز من تطبيق المصادقة بدلًا من ذلك',
  'recovery.invalidCode': 'رمز الاسترداد هذا غير صالح أو استُخدم من قبل.',
  'recovery.usedTitle': 'تم قبول رمز الاسترداد',
  'recovery.usedUp':
    'لقد استُخدم رمز الاسترداد هذا ولم يعد صالحًا. {remaining, plural, zero {<left>لم يبقَ لديك أي رمز استرداد</left>} one {<left>بقي لديك رمز استرداد واحد</left>} two {<left>بقي لديك رمزا استرداد</left>} few {<left>بقيت لديك # رموز استرداد</left>} many {<left>بقي لديك # رمز استرداد</left>} other {<left>بقي لديك # رمز استرداد</left>}}.',
  'recovery.getNewSetSoon': 'احصل قريبًا على مجموعة جديدة من {accountLink}.',
  'recovery.getNewSetAnyTime': 'يمكنك الحصول على مجموعة جديدة في أي وقت من {accountLink}.',
  'recovery.accountPage': 'صفحة حسابك',
  'recovery.continue': 'متابعة',

  'consent.title': 'السماح لـ {client} بالوصول؟',
  'consent.lead': 'يطلب <strong>{client}</strong>{fromHost} ما يلي:',
  'consent.fromHost': '(من {host})',
  'consent.signedInAs': 'مسجَّل الدخول باسم <strong>{user}</strong>.',
  'consent.deny': 'رفض',
  'consent.allow': 'سماح',
  'consent.withdraw': 'يمكنك سحب هذا الإذن في أي وقت من {accountLink}.',
  'consent.accountPage': 'صفحة حسابك',
  'scope.openid': 'تأكيد هويتك عند تسجيل الدخول',
  'scope.offline_access': 'الاحتفاظ بالوصول حين لا تستخدم التطبيق',
  'scope.claims': 'الاطلاع على {claims}',
  'scope.read': 'عرض بياناتك في «{resource}»',
  'scope.write': 'إنشاء بياناتك في «{resource}» وتعديلها',
  'scope.other': 'استخدام الإذن «{scope}»',
  'claim.name': 'اسمك',
  'claim.email': 'عنوان بريدك الإلكتروني',
  'claim.groups': 'المجموعات التي تنتمي إليها',

  'error.code': 'رمز الخطأ: <code>{errorCode}</code>',
  'error.defaultAdvice': 'عُد إلى التطبيق الذي أتيت منه وحاول مرة أخرى.',
  'error.startPage': 'الانتقال إلى صفحة البداية',
  'error.accountPage': 'الانتقال إلى حسابك',
  'error.alreadyCompleted.title': 'اكتمل طلب تسجيل الدخول هذا من قبل',
  'error.alreadyCompleted.message': 'عُد إلى التطبيق؛ فربما سجّل دخولك بالفعل.',
  'error.expired.title': 'انتهت صلاحية طلب تسجيل الدخول هذا',
  'error.expired.message': 'استغرق تسجيل الدخول وقتًا طويلًا أو اكتمل من قبل. ابدأ من جديد من التطبيق.',
  'error.expired.messageNoApp':
    'استغرق تسجيل الدخول وقتًا طويلًا أو اكتمل من قبل. ابدأ من جديد من التطبيق الذي أتيت منه.',
  'error.otherBrowser.title': 'بدأ تسجيل الدخول في متصفح آخر',
  'error.otherBrowser.message': 'يُرجى بدء تسجيل الدخول من جديد من التطبيق، في هذا المتصفح.',
  'error.formExpired.title': 'انتهت صلاحية هذا النموذج',
  'error.formExpired.message':
    'تعذّر التحقق من النموذج: إما أنه بقي مفتوحًا مدة طويلة، أو أنه أتى من متصفح آخر.',
  'error.formExpired.advice': 'عُد إلى الصفحة السابقة، وأعد تحميلها، ثم أرسل النموذج مرة أخرى.',

  'logout.title': 'تسجيل الخروج؟',
  'logout.question': 'هل تريد تسجيل الخروج؟',
  'logout.clientAsks': 'يطلب منك <strong>{client}</strong> تسجيل الخروج.',
  'logout.explanation':
    'يُنهي تسجيل الخروج جلستك هنا وفي التطبيقات التي سجّلت الدخول إليها بها. إن لم تطلب تسجيل الخروج، فأغلق هذه الصفحة.',
  'logout.submit': 'تسجيل الخروج',
  'signedOut.title': 'لقد سجّلت الخروج',
  'signedOut.done': 'تم تسجيل خروجك.',
  'signedOut.closeOrStart': 'تم تسجيل خروجك. يمكنك إغلاق هذه النافذة، أو المتابعة من صفحة البداية.',
  'signedOut.continue': 'متابعة',
  'signedOut.frameTitle': 'تسجيل الخروج من تطبيق',

  'forgot.title': 'هل نسيت كلمة المرور؟',
  'forgot.lead':
    'أدخل عنوان البريد الإلكتروني لحسابك. إن كان يخص حسابًا، فسنرسل إليه رابطًا لاختيار كلمة مرور جديدة.',
  'forgot.email': 'عنوان البريد الإلكتروني',
  'forgot.submit': 'إرسال الرابط',
  'forgot.sentTitle': 'تفقّد بريدك',
  'forgot.sent': 'إن كان هناك حساب يستخدم هذا العنوان، فإن رابطًا لاختيار كلمة مرور جديدة في طريقه إليه.',
  'forgot.sentAdvice':
    'يعمل الرابط مرة واحدة، لمدة {minutes} دقيقة. لم يصلك شيء؟ تفقّد مجلد الرسائل غير المرغوب فيها، أو اطلبه مجددًا بعد بضع دقائق.',
  'forgot.formExpired': 'انتهت صلاحية النموذج. يُرجى إدخال عنوانك مرة أخرى.',
  'forgot.limitedTitle': 'محاولات كثيرة جدًا',
  'forgot.limited': 'طلبات كثيرة جدًا لرابط إعادة التعيين. يُرجى الانتظار بضع دقائق ثم المحاولة مرة أخرى.',
  'reset.mismatch': 'كلمة المرور الجديدة وتأكيدها غير متطابقين.',
  'reset.title': 'اختيار كلمة مرور جديدة',
  'reset.lead': 'اختر كلمة مرور جديدة: {length} أحرف على الأقل، وألّا تكون شائعة.',
  'reset.newPassword': 'كلمة المرور الجديدة',
  'reset.confirmPassword': 'تأكيد كلمة المرور الجديدة',
  'reset.submit': 'حفظ كلمة المرور الجديدة',
  'reset.doneTitle': 'تم تغيير كلمة المرور',
  'reset.done': 'تم تغيير كلمة مرورك، وتم تسجيل الخروج من جميع جلسات حسابك.',
  'reset.doneAdvice': 'عُد إلى التطبيق وسجّل الدخول بكلمة المرور الجديدة، أو سجّل الدخول إلى حسابك من هنا.',
  'reset.signInToAccount': 'تسجيل الدخول إلى حسابك',
  'reset.invalidTitle': 'الرابط لم يعد صالحًا',
  'reset.invalid':
    'هذا الرابط لم يعد صالحًا: إما أنه استُخدم من قبل، أو انتهت صلاحيته، أو أُرسل رابط أحدث، أو تغيّرت كلمة المرور منذ ذلك الحين.',
  'reset.askAgain': 'طلب رابط جديد',

  'mail.reset.subject': 'إعادة تعيين كلمة المرور لـ {site}',
  'mail.reset.heading': 'إعادة تعيين كلمة المرور',
  'mail.reset.asked': 'طلب أحدهم إعادة تعيين كلمة مرور الحساب المرتبط بهذا العنوان على {site}.',
  'mail.reset.validity':
    'يعمل الرابط أدناه مرة واحدة، لمدة {minutes} دقيقة. لن يتغير شيء بمجرد فتحه، إلا بعد أن تختار كلمة مرور جديدة على الصفحة.',
  'mail.reset.action': 'اختيار كلمة مرور جديدة',
  'mail.reset.footer': 'إن لم تطلب ذلك فتجاهل هذه الرسالة: ستبقى كلمة مرورك كما هي.',
  'mail.notice.happened': '{what} على {site} في {at}، من {device} (العنوان {ip}).',
  'mail.notice.footer':
    'إن لم تكن أنت، فغيّر كلمة مرورك فورًا من صفحة الحساب على {site} (أو عبر «هل نسيت كلمة المرور؟» في صفحة تسجيل الدخول)، وراجع طرق تسجيل الدخول لديك، وأبلغ المسؤول.',
  'mail.notice.subjectAt': '{subject} على {site}',
  'mail.factorAdded.subject': 'أُضيفت طريقة تسجيل دخول إلى حسابك',
  'mail.factorAdded.heading': 'أُضيفت طريقة تسجيل دخول',
  'mail.factorAdded.what': 'أُضيف مفتاح مرور أو تطبيق مصادقة إلى حسابك',
  'mail.factorRemoved.subject': 'أُزيلت طريقة تسجيل دخول من حسابك',
  'mail.factorRemoved.heading': 'أُزيلت طريقة تسجيل دخول',
  'mail.factorRemoved.what': 'أُزيل مفتاح مرور أو تطبيق مصادقة من حسابك',
  'mail.recoveryCodeUsed.subject': 'استُخدم رمز استرداد خاص بحسابك',
  'mail.recoveryCodeUsed.heading': 'استُخدم رمز استرداد',
  'mail.recoveryCodeUsed.what': 'استُخدم أحد رموز الاسترداد الخاصة بك لتسجيل الدخول إلى حسابك',
  'mail.identityLinked.subject': 'رُبطت خدمة تسجيل دخول بحسابك',
  'mail.identityLinked.heading': 'رُبطت خدمة تسجيل دخول',
  'mail.identityLinked.what': 'رُبط تسجيل الدخول عبر {service} بحسابك',
  'mail.identityUnlinked.subject': 'فُصلت خدمة تسجيل دخول عن حسابك',
  'mail.identityUnlinked.heading': 'فُصلت خدمة تسجيل دخول',
  'mail.identityUnlinked.what': 'فُصل تسجيل الدخول عبر {service} عن حسابك',
  'mail.anotherService': 'خدمة أخرى',
  'mail.passwordChanged.subject': 'تم تغيير كلمة مرورك لـ {site}',
  'mail.passwordChanged.heading': 'تم تغيير كلمة مرورك',
  'mail.passwordChanged.what': 'تم تغيير كلمة مرور حسابك على {site} في {at} من {device} (العنوان {ip}).',
  'mail.passwordChanged.ended':
    'أُنهيت كل جلسات الحساب وعمليات تسجيل الدخول في التطبيقات؛ سجّل الدخول من جديد بكلمة المرور الجديدة.',
  'mail.passwordChanged.footer':
    'إن لم تكن أنت، فأعد تعيين كلمة مرورك فورًا عبر «هل نسيت كلمة المرور؟» في صفحة تسجيل الدخول على {site}، وأبلغ المسؤول.',
  'mail.verify.subject': 'تأكيد عنوانك لـ {site}',
  'mail.verify.heading': 'تأكيد عنوانك',
  'mail.verify.asked': 'طلب أحدهم من {site} تأكيد أن هذا العنوان يخص حسابه.',
  'mail.verify.validity':
    'يعمل الرابط أدناه مرة واحدة، لمدة {hours} ساعة. لن يتغير شيء بمجرد فتحه، إلا بعد الضغط على الزر في الصفحة.',
  'mail.verify.action': 'تأكيد هذا العنوان',
  'mail.ignore': 'إن لم تطلب ذلك فتجاهل هذه الرسالة.',
  'mail.change.subject': 'تأكيد عنوانك الجديد لـ {site}',
  'mail.change.heading': 'تأكيد عنوانك الجديد',
  'mail.change.asked':
    'طلب أحدهم من {site} استخدام هذا العنوان لحسابه. يحتفظ الحساب بعنوانه القديم إلى أن يتم التأكيد.',
  'mail.change.validity':
    'يعمل الرابط أدناه مرة واحدة، لمدة 24 ساعة. لن يتغير شيء بمجرد فتحه، إلا بعد الضغط على الزر في الصفحة.',
  'mail.change.action': 'استخدام هذا العنوان',
  'mail.changeNotice.subject': 'يجري تغيير عنوان حسابك على {site}',
  'mail.changeNotice.heading': 'يجري تغيير عنوانك',
  'mail.changeNotice.what':
    'في {at}، ومن {device} (العنوان {ip})، طلب حسابك على {site} استخدام {newAddress} بدلًا من هذا العنوان. يسري التغيير حين يتم تأكيد العنوان الجديد.',
  'mail.changeNotice.action': 'لم أطلب ذلك: تراجع عن التغيير وسجّل خروجي من كل مكان',
  'mail.changeNotice.footer':
    'يعمل الرابط مرة واحدة، لمدة 7 أيام. إن كنت أنت من طلب ذلك فلا داعي لفعل أي شيء.',
  'mail.link.subject': 'ربط {provider} بحسابك على {site}',
  'mail.link.heading': 'استخدام {provider} لتسجيل الدخول',
  'mail.link.asked':
    'طلب شخص يسجّل الدخول إلى {site} عبر {provider} ربط تسجيل الدخول هذا بالحساب المرتبط بهذا العنوان.',
  'mail.link.validity':
    'يعمل الرابط أدناه مرة واحدة، لمدة {minutes} دقيقة، وفي المتصفح الذي بدأ فيه تسجيل الدخول فقط. لن يتغير شيء بمجرد فتحه، إلا بعد الضغط على الزر في الصفحة.',
  'mail.link.action': 'ربط {provider} وتسجيل الدخول',
  'mail.link.footer': 'إن لم تطلب ذلك فتجاهل هذه الرسالة: لن يُربط شيء من دونها.',
};
