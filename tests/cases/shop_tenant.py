"""The online shop's cases asked in each tenant (tests/cases/shop.toml).

Plain filters, counts and lists on one entity (answered today), and the
questions issue 22 makes answerable: scalar aggregates, breakdowns and
conditions across a declared relation. Every expectation is computed from the
tenant's rows here; a case the product cannot answer yet must abstain (safe),
never be answered beside the question (wrong).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from cases.oracle import CaseFile, Row, at, between, eq, gt, gte, lt, ne
from cases.shop_rows import (
    NOW,
    Shop,
    aggregate,
    breakdown,
    month,
    ratio,
    table,
    top,
    year_is,
)


def add_plain_cases(cf: CaseFile, tenant: str, shop: Shop) -> None:  # noqa: PLR0915
    add = cf.add
    cu, pr, od, ln, pa = (
        shop[n] for n in ("customer", "product", "order", "order_line", "payment")
    )
    add("How many customers are there?", tenant, **cu.count())
    add("有多少个客户", tenant, **cu.count())
    add("List all customers", tenant, **cu.listing())
    add("列出所有客户", tenant, **cu.listing())
    add("How many gold customers are there?", tenant, **cu.count(eq("tier", "gold")))
    add("有多少个金卡会员客户", tenant, **cu.count(eq("tier", "gold")))
    add("How many customers are in Berlin?", tenant, **cu.count(eq("city", "Berlin")))
    add("城市是 Berlin 的客户有多少个", tenant, **cu.count(eq("city", "Berlin")))
    news = eq("newsletter", True)
    add("Which customers subscribed to the newsletter?", tenant, **cu.listing(news))
    add("订阅了新闻邮件的客户有哪些", tenant, **cu.listing(news))
    y2025 = year_is("signed_up", 2025)
    add("Which customers signed up in 2025?", tenant, **cu.listing(y2025))
    add("2025年注册的客户有哪些", tenant, **cu.listing(y2025))
    add("How many products are there?", tenant, **pr.count())
    add("有多少个商品", tenant, **pr.count())
    add("Which products are in the books category?", tenant, **pr.listing(eq("category", "books")))
    add("图书类的商品有哪些", tenant, **pr.listing(eq("category", "books")))
    add("Which products have a price under 20?", tenant, **pr.listing(lt("list_price", 20)))
    add("价格低于 20 的商品有哪些", tenant, **pr.listing(lt("list_price", 20)))
    add("How many orders are there?", tenant, **od.count())
    add("现在有多少个订单", tenant, **od.count())
    add("How many cancelled orders are there?", tenant, **od.count(eq("status", "cancelled")))
    add("有多少个已取消的订单", tenant, **od.count(eq("status", "cancelled")))
    add("List the delivered orders", tenant, **od.listing(eq("status", "delivered")))
    add("列出所有已送达的订单", tenant, **od.listing(eq("status", "delivered")))
    add("How many orders came through the app?", tenant, **od.count(eq("channel", "app")))
    add("通过手机应用下单的订单有多少个", tenant, **od.count(eq("channel", "app")))
    o2025 = year_is("ordered_at", 2025)
    add("How many orders have an order date in 2025?", tenant, **od.count(o2025))
    add("2025年下单的订单有多少个", tenant, **od.count(o2025))
    add("How many orders are not cancelled?", tenant, **od.count(ne("status", "cancelled")))
    add("有多少个不是已取消的订单", tenant, **od.count(ne("status", "cancelled")))
    add("Are there any shipped orders?", tenant, **od.exists(eq("status", "shipped")))
    add("有没有已发货的订单", tenant, **od.exists(eq("status", "shipped")))
    add("How many payments were made by card?", tenant, **pa.count(eq("method", "card")))
    add("银行卡支付的付款记录有多少个", tenant, **pa.count(eq("method", "card")))
    add("How many payments were refunded?", tenant, **pa.count(eq("refunded", True)))
    add("已退款的付款记录有多少个", tenant, **pa.count(eq("refunded", True)))
    add("Which payments have an amount over 200?", tenant, **pa.listing(gt("amount", 200)))
    add("金额超过 200 的付款记录有哪些", tenant, **pa.listing(gt("amount", 200)))
    add("How many payments were made by PayPal?", tenant, **pa.count(eq("method", "paypal")))
    add("通过 PayPal 支付的付款记录有多少个", tenant, **pa.count(eq("method", "paypal")))
    may = between(at(2026, 5), at(2026, 6), "paid_at")
    add("Which payments were paid last month?", tenant, **pa.listing(may))
    add("上个月的付款记录有哪些", tenant, **pa.listing(may))
    add("How many order lines are there?", tenant, **ln.count())
    add("有多少个订单明细", tenant, **ln.count())
    add(
        "How many order lines have a quantity of at least 3?",
        tenant,
        **ln.count(gte("quantity", 3)),
    )
    add("数量至少为 3 的订单明细有多少个", tenant, **ln.count(gte("quantity", 3)))
    first = od.rows[0]
    snap = {"contract": "entity_snapshot", "ids": [str(first["id"])]}
    add(
        f"What is the status of order {first['id']}?",
        tenant,
        **snap,
        fields={"status": first["status"]},
    )
    add(f"订单 {first['id']} 现在什么状态", tenant, **snap, fields={"status": first["status"]})
    week = between(NOW - timedelta(days=7), NOW + timedelta(seconds=1), "ordered_at")
    add("Which orders were placed in the last 7 days?", tenant, **od.listing(week), or_clarify=True)
    add("最近7天的订单有哪些", tenant, **od.listing(week))


def add_analytic_cases(cf: CaseFile, tenant: str, shop: Shop) -> None:
    add = cf.add
    cu, pr, od, ln, pa = (
        shop[n] for n in ("customer", "product", "order", "order_line", "payment")
    )
    card25 = pa.where(eq("method", "card"), year_is("paid_at", 2025))
    add(
        "What is the total amount paid by card in 2025?",
        tenant,
        **aggregate((p["amount"] for p in card25), "sum"),
    )
    add("2025年银行卡支付的总金额是多少", tenant, **aggregate((p["amount"] for p in card25), "sum"))
    paid = sum(p["amount"] for p in pa.rows)
    orders_paid = len({p["order_id"] for p in pa.rows})
    add("What is the average order value?", tenant, **ratio(paid, orders_paid))
    add("订单平均金额是多少", tenant, **ratio(paid, orders_paid))
    add(
        "What is the total amount paid?", tenant, **aggregate((p["amount"] for p in pa.rows), "sum")
    )
    add("支付总额是多少", tenant, **aggregate((p["amount"] for p in pa.rows), "sum"))
    add(
        "What is the average payment amount?",
        tenant,
        **aggregate((p["amount"] for p in pa.rows), "avg"),
    )
    add("平均支付金额是多少", tenant, **aggregate((p["amount"] for p in pa.rows), "avg"))
    # "the largest payment amount" asked as a value is the maximum ("which payment is
    # the largest" would ask for the payment)
    amounts = [p["amount"] for p in pa.rows]
    add("What is the largest payment amount?", tenant, **aggregate(amounts, "max"))
    add("最大的一笔付款金额是多少", tenant, **aggregate(amounts, "max"))
    add(
        "How many units were sold in total?",
        tenant,
        **aggregate((x["quantity"] for x in ln.rows), "sum"),
    )
    add("总销量是多少", tenant, **aggregate((x["quantity"] for x in ln.rows), "sum"))
    add(
        "What is the average product price?",
        tenant,
        **aggregate((p["list_price"] for p in pr.rows), "avg"),
    )
    add("商品的平均价格是多少", tenant, **aggregate((p["list_price"] for p in pr.rows), "avg"))
    refunds = [p["amount"] for p in pa.where(eq("refunded", True))]
    add("What is the total refunded amount?", tenant, **aggregate(refunds, "sum"))
    add("退款总额是多少", tenant, **aggregate(refunds, "sum"))

    per_month = breakdown(od.where(year_is("ordered_at", 2025)), lambda o: month(o["ordered_at"]))
    add("How many orders per month in 2025?", tenant, **table(per_month))
    add("2025年每个月有多少个订单", tenant, **table(per_month))
    per_customer = breakdown(od.rows, lambda o: shop.customer_of(o)["name"])
    add("How many orders does each customer have?", tenant, **table(per_customer))
    add("每个客户的订单数", tenant, **table(per_customer))
    names = shop.by_id("product")
    revenue = breakdown(
        ln.rows, lambda x: names[x["product_id"]]["name"], lambda x: x["quantity"] * x["unit_price"]
    )
    add("Top 5 products by revenue", tenant, **table(top(revenue, 5)))
    add("销售额最高的 5 个商品", tenant, **table(top(revenue, 5)))
    by_method = breakdown(pa.rows, lambda p: p["method"], lambda p: p["amount"])
    add("What is the total paid per payment method?", tenant, **table(by_method))
    add("每种支付方式的支付总额", tenant, **table(by_method))
    by_city = breakdown(cu.rows, lambda c: c["city"])
    add("How many customers per city?", tenant, **table(by_city))
    add("每个城市有多少个客户", tenant, **table(by_city))
    by_status = breakdown(od.rows, lambda o: o["status"])
    add("How many orders per status?", tenant, **table(by_status))
    add("各状态的订单数分别是多少", tenant, **table(by_status))
    by_category = breakdown(
        ln.rows, lambda x: names[x["product_id"]]["category"], lambda x: x["quantity"]
    )
    add("How many units were sold per product category?", tenant, **table(by_category))
    add("每个品类的销量是多少", tenant, **table(by_category))
    orders = shop.by_id("order")
    by_tier = breakdown(
        pa.rows, lambda p: shop.customer_of(orders[p["order_id"]])["tier"], lambda p: p["amount"]
    )
    add("What is the total paid by customer tier?", tenant, **table(by_tier))
    add("按会员等级统计支付总额", tenant, **table(by_tier))
    add_relation_cases(cf, tenant, shop)


def add_relation_cases(cf: CaseFile, tenant: str, shop: Shop) -> None:
    add = cf.add
    cu, od, pa = shop["customer"], shop["order"], shop["payment"]

    def orders_where(pred: Any) -> dict[str, Any]:
        return od.listing(pred)

    berlin = orders_where(lambda o: shop.customer_of(o)["city"] == "Berlin")
    add("Which orders are from customers in Berlin?", tenant, **berlin)
    add("Berlin 的客户下的订单有哪些", tenant, **berlin)
    refunded = orders_where(lambda o: any(p["refunded"] for p in shop.payments_of(o)))
    add("Which orders have a refunded payment?", tenant, **refunded)
    add("有退款的订单有哪些", tenant, **refunded)
    cancelled = cu.listing(lambda c: any(o["status"] == "cancelled" for o in shop.orders_of(c)))
    add("Which customers have a cancelled order?", tenant, **cancelled)
    add("有已取消订单的客户有哪些", tenant, **cancelled)
    buyer = _busiest(shop)
    mine = orders_where(lambda o: o["customer_id"] == buyer["id"])
    add(f"Which orders did {buyer['name']} place?", tenant, **mine)
    add(f"{buyer['name']} 的订单有哪些", tenant, **mine)
    gold = pa.count(
        lambda p: shop.customer_of(shop.by_id("order")[p["order_id"]])["tier"] == "gold"
    )
    add("How many payments are for orders of gold customers?", tenant, **gold)
    add("金卡会员客户的订单有多少个付款记录", tenant, **gold)
    bought = {ln["product_id"] for o in shop.orders_of(buyer) for ln in shop.lines_of(o)}
    products = shop["product"].listing(lambda p: p["id"] in bought)
    add(f"Which products has {buyer['name']} bought?", tenant, **products)
    add(f"{buyer['name']} 买过哪些商品", tenant, **products)
    item = shop["product"].rows[0]
    holding = orders_where(lambda o: any(x["product_id"] == item["id"] for x in shop.lines_of(o)))
    add(f"Which orders contain {item['name']}?", tenant, **holding)
    add(f"包含 {item['name']} 的订单有哪些", tenant, **holding)
    unpaid = od.exists(lambda o: not shop.payments_of(o))
    add("Are there any orders without a payment?", tenant, **unpaid)
    add("有没有未支付的订单", tenant, **unpaid)


def _busiest(shop: Shop) -> Row:
    """The customer with the most orders (the first by id among equals)."""
    rows = shop["customer"].rows
    return max(rows, key=lambda c: (len(shop.orders_of(c)), -c["id"]))
