"""Corpora for `cases generate` tests: ten documents of about equal size (five English, five Chinese), and the
twelve-document corpus that adds one too short to ask about and one twice as long."""

from __future__ import annotations

import json
from pathlib import Path

EQUAL: list[dict[str, str]] = [
    {
        "id": "en-refunds",
        "title": "Refunds",
        "text": "Refunds are issued within one business day after inspection. Card refunds appear on the statement "
        "in three to five business days. Wallet refunds arrive instantly. Gift cards cannot be refunded as cash. "
        "Shipping fees are refunded only for damaged goods. A refund request expires after thirty days.",
    },
    {
        "id": "en-shipping",
        "title": "Shipping",
        "text": "Standard parcels leave the warehouse within two days. Express delivery costs nine dollars per order. "
        "Orders above fifty dollars ship free of charge. Remote islands add four extra days to delivery. "
        "Tracking numbers are emailed when the parcel is scanned. Lost parcels are replaced after ten days.",
    },
    {
        "id": "en-invoices",
        "title": "Invoices",
        "text": "Electronic invoices are emailed within three working days. Paper invoices are posted on request "
        "only. A company invoice needs the tax number of the buyer. Invoices can be reissued once per order. "
        "Invoice titles cannot be changed after issue. Invoices for gift orders go to the payer.",
    },
    {
        "id": "en-accounts",
        "title": "Accounts",
        "text": "Passwords must have twelve characters or more. Two-step login is offered through an authenticator "
        "app. Locked accounts reopen after fifteen minutes. Closing an account deletes the order history. "
        "Email addresses can be changed twice a year. Business accounts may add five staff members.",
    },
    {
        "id": "en-warranty",
        "title": "Warranty",
        "text": "Headphones carry a warranty of twelve months. Batteries are covered for six months only. "
        "Water damage is not covered by the warranty. Repairs are finished within seven working days. "
        "A replacement unit ships when repair is impossible. The warranty card must show the purchase date.",
    },
    {
        "id": "zh-refunds",
        "title": "退款",
        "text": "退货商品验收后一个工作日内退款。信用卡退款三到五个工作日到账。钱包余额退款即时到账。"
        "礼品卡不能兑换现金退款。只有商品破损时退还运费。退款申请三十天后失效。",
    },
    {
        "id": "zh-shipping",
        "title": "物流",
        "text": "普通包裹两天内从仓库发出。加急配送每单收费九元。订单满五十元免运费。"
        "偏远海岛配送另加四天。包裹扫描后以邮件发送运单号。丢失的包裹十天后补发。",
    },
    {
        "id": "zh-invoices",
        "title": "发票",
        "text": "电子发票三个工作日内发到邮箱。纸质发票仅在申请后邮寄。公司发票需要买方税号。"
        "每个订单可以重开一次发票。发票抬头开具后不能修改。礼品订单的发票开给付款人。",
    },
    {
        "id": "zh-accounts",
        "title": "账户",
        "text": "密码至少需要十二个字符。两步登录通过验证器应用开启。账户锁定十五分钟后解锁。"
        "注销账户会删除全部订单记录。邮箱地址每年可以修改两次。企业账户最多添加五名员工。",
    },
    {
        "id": "zh-warranty",
        "title": "保修",
        "text": "耳机保修期为十二个月。电池只保修六个月。进水损坏不在保修范围内。"
        "维修在七个工作日内完成。无法维修时寄出替换机。保修卡必须写明购买日期。",
    },
]
"""Ten documents, each six sentences of one policy: five in English, five in Chinese."""

SHORT = {"id": "en-stub", "title": "Contact", "text": "Call us any time."}
"""Too short to ask about."""

LONG = {
    "id": "en-returns-long",
    "title": "Returns in detail",
    "text": " ".join(
        [
            "Returns start from the order page with the Request return button.",
            "A prepaid label is printed from the return confirmation email.",
            "Items must be sent back in their original packaging.",
            "Opened software cannot be returned unless it is faulty.",
            "Large furniture is collected by a courier at a booked time.",
            "Collection slots are offered on weekdays between eight and six.",
            "Returned items are inspected within two working days of arrival.",
            "Customers receive an email when the inspection is complete.",
            "Exchanges ship once the returned item has been inspected.",
            "A second exchange of the same item needs approval from support.",
            "Returns from outside the country need a customs form.",
            "Customs duties paid on import are not refunded by us.",
        ]
    ),
}
"""About twice as long as the others."""

TWELVE = [*EQUAL, SHORT, LONG]


def write_jsonl(path: Path, docs: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    return path
