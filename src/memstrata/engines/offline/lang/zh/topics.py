"""Chinese scene topics: the words a person would use for a scene (健身, 工作, 饮食与健康), from the
topic words a clause holds. General Chinese only: no names, no data-set terms."""

from __future__ import annotations

import re
from collections.abc import Iterable

from memstrata.engines.offline.lang.zh.rules import content_words

INSTRUCTION_SCENE = "助手指令"
FALLBACK_SCENE = "日常"

# Topic -> its cue words; a clause's label is the topic with most cues (earlier topics win ties).
TOPICS: dict[str, tuple[str, ...]] = {
    "饮食与健康": tuple(
        "过敏 吃素 素食 纯素 忌口 医生 医院 生病 感冒 发烧 健康 饮食 减肥 哮喘 糖尿病 手术 体检 药 "
        "怀孕 失眠 餐厅 做饭 下厨 咖啡 火锅 早餐 午餐 晚餐 菜 零食 花生 海鲜 牛奶 乳糖".split()
    ),
    "健身": tuple(
        "健身 健身房 跑步 马拉松 攀岩 抱石 爬山 登山 徒步 瑜伽 游泳 骑行 篮球 足球 羽毛球 网球 运动 "
        "锻炼 训练 比赛".split()
    ),
    "旅行": tuple("旅行 旅游 机票 飞机 航班 高铁 火车 酒店 签证 度假 出国 景点 行程 自驾 护照".split()),
    "工作": tuple(
        "工作 公司 上班 同事 老板 领导 工程师 程序员 项目 加班 面试 升职 跳槽 辞职 职位 客户 入职 "
        "创业 团队 会议 出差 工资".split()
    ),
    "居住": tuple("搬家 搬到 搬来 搬去 住在 房子 公寓 租房 房租 小区 邻居 装修 买房 老家".split()),
    "学习": tuple("学校 大学 考试 课程 学习 毕业 研究生 博士 留学 专业 论文 培训".split()),
    "宠物": tuple("狗 猫 宠物 猫咪 小狗 狗狗 遛狗 兽医".split()),
    "爱好": tuple("画画 音乐 吉他 钢琴 读书 看书 小说 电影 摄影 游戏 唱歌 跳舞 手工 园艺".split()),
    "家庭": tuple(
        "家人 家里 爸爸 妈妈 父母 爸妈 儿子 女儿 孩子 宝宝 老婆 老公 妻子 丈夫 哥哥 姐姐 弟弟 妹妹 "
        "爷爷 奶奶 外公 外婆 亲戚 结婚 婚礼".split()
    ),
    "感情": tuple("女朋友 男朋友 对象 约会 恋爱 分手 未婚妻 未婚夫 求婚 异地".split()),
    "朋友": tuple("朋友 聚会 同学 闺蜜 兄弟 室友".split()),
    "理财": tuple("存钱 理财 投资 股票 基金 贷款 预算 房贷".split()),
}
_CUES = {w: topic for topic, cues in TOPICS.items() for w in cues}


_PRONOUN = re.compile(r"[我你他她]")  # 我要, 我养: what jieba keeps with a pronoun names no topic
_NUMERAL = re.compile(r"^[\d零〇一二两三四五六七八九十百千万几每]")  # 一名, 五公里: no topic
# Time words say when, not what: they never name a scene.
_TIME = re.compile(
    r"^(?:[上下这本]个?(?:周|星期|礼拜|月)|周末|[今昨明前后]天|[今去明前后]年|月底|农历|.+[月日号天周年]$)"
)


def scene_label(text: str, ignore: Iterable[str] = ()) -> str:
    """The topic of ``text`` in Chinese (the one whose cue words it holds most), else its two
    longest content words (``深圳-无人机``), never a time word or one of ``ignore`` (names)."""
    skip = {w.lower() for w in ignore}
    scores: dict[str, int] = {}
    for cue, topic in _CUES.items():
        if len(cue) > 1 and cue in text:
            scores[topic] = scores.get(topic, 0) + text.count(cue)
    found = [
        w
        for w in content_words(text)
        if w.lower() not in skip and not _TIME.match(w) and not _NUMERAL.match(w) and not _PRONOUN.search(w)
    ]
    if scores:
        order = list(TOPICS)
        return min(scores, key=lambda t: (-scores[t], order.index(t)))
    chosen = sorted({w for w in found if not w.isascii()}, key=lambda w: (-len(w), w))[:2]
    return "-".join(sorted(chosen)) or FALLBACK_SCENE
